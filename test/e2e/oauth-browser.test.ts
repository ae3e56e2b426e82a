// The whole authorization flow in headless Chromium: register a client, authorize with PKCE, sign in on the consent page,
// approve, exchange the code, call GET /api/wallet with the access token; a second
// exchange of the same code fails and revokes what the first issued; a wrong verifier
// fails. The client's redirect URI is a server of the test's own on loopback.
import { launchHeadlessChromium, openPage } from '../support/chromium.ts'
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { signUp, build } from '../support/service.ts'
import { authorizeUrl, pkce, tokenRequest } from '../support/oauth-flow.ts'
import { waitUntil } from '../support/eventstore-contract.ts'

const { dataDir, service, api } = await build(t)
const password = 'correct horse battery staple'
await signUp(api, dataDir, 'browser-owner@example.com', password)

// The client application's redirect URI: records what comes back.
const arrived: URL[] = []
const app = createServer((req, res) => {
  arrived.push(new URL(req.url ?? '/', 'http://127.0.0.1'))
  res.end('back at the app')
})
await new Promise<void>(resolve => app.listen(0, '127.0.0.1', resolve))
t.teardown(() => {
  app.close()
})
const redirectUri = `http://127.0.0.1:${(app.address() as AddressInfo).port}/callback`

const browser = await launchHeadlessChromium()
t.teardown(() => browser.close())

/** Authorizes in the browser: sign in on the consent page, approve; the code the app received. */
async function authorizeInBrowser(clientId: string, challenge: string, state: string): Promise<{ code: string; state: string | null }> {
  const page = await openPage(browser)
  try {
    // Only the redirect counts (the browser also asks the app for /favicon.ico).
    const callbacks = (): URL[] => arrived.filter(u => u.pathname === '/callback')
    const before = callbacks().length
    await page.goto(
      service.url +
        authorizeUrl({
          client_id: clientId,
          redirect_uri: redirectUri,
          response_type: 'code',
          code_challenge: challenge,
          code_challenge_method: 'S256',
          scope: 'billing:read results:read',
          state
        })
    )
    await page.type('input[name=email]', 'browser-owner@example.com')
    await page.type('input[name=password]', password)
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
    const text = await page.evaluate(() => document.body.innerText)
    if (!/Read your wallet/.test(text)) throw new Error(`not the consent form: ${text.slice(0, 300)}`)
    await Promise.all([page.waitForNavigation(), page.click('button[value=approve]')])
    await waitUntil(() => callbacks().length > before)
    const back = callbacks()[before]
    return { code: back.searchParams.get('code')!, state: back.searchParams.get('state') }
  } finally {
    await page.close()
  }
}

t.test('register, authorize with PKCE, sign in, approve, exchange, call the API; a code works once; a wrong verifier fails', async t => {
  const reg = await api('POST', '/oauth/register', { body: { client_name: 'Browser test app', redirect_uris: [redirectUri] } })
  t.equal(reg.status, 201)
  const clientId = reg.body.client_id as string
  const { verifier, challenge } = pkce()
  const { code, state } = await authorizeInBrowser(clientId, challenge, 'state with spaces & signs=')
  t.equal(state, 'state with spaces & signs=', 'state came back unchanged')
  t.match(code, /^[A-Za-z0-9_-]{43}$/)
  const first = await tokenRequest(service.url, {
    grant_type: 'authorization_code',
    code,
    client_id: clientId,
    redirect_uri: redirectUri,
    code_verifier: verifier
  })
  t.equal(first.status, 200)
  const wallet = await api('GET', '/api/wallet', { token: first.body.access_token })
  t.equal(wallet.status, 200)
  t.type(wallet.body.balance, 'number')
  const second = await tokenRequest(service.url, {
    grant_type: 'authorization_code',
    code,
    client_id: clientId,
    redirect_uri: redirectUri,
    code_verifier: verifier
  })
  t.equal(second.status, 400)
  t.equal(second.body.error, 'invalid_grant')
  t.equal((await api('GET', '/api/wallet', { token: first.body.access_token })).status, 401, "the first exchange's access token is revoked")
  t.equal(
    (await tokenRequest(service.url, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: clientId })).body.error,
    'invalid_grant',
    'and its refresh token'
  )

  const other = pkce()
  const again = await authorizeInBrowser(clientId, other.challenge, 's2')
  const wrong = await tokenRequest(service.url, {
    grant_type: 'authorization_code',
    code: again.code,
    client_id: clientId,
    redirect_uri: redirectUri,
    code_verifier: pkce().verifier
  })
  t.equal(wrong.status, 400)
  t.equal(wrong.body.error, 'invalid_grant', 'a wrong code_verifier')
})
