// The console's signed-out flows in headless Chromium:
// sign up and confirm with the mailed code, sign in, reload, sign out — in English and
// in French, at 1440 and at 390 px; the two-factor challenge with a TOTP code and with a
// backup code; forgot and reset the password; the lockout's 429 said as a wait; sign-in by
// keyboard alone. The oracles: the outbox's mails (the codes and links the service filed),
// the API read back with a session of the test's own, a TOTP computed with node:crypto,
// and the browser's own record of requests (none elsewhere, none failing on a first load).
// The OAuth consent page, server-rendered, wears the console's style sheet.
import t from 'tap'
import { client, confirmationCode, mailedLink, signUp, startTestService, testConfig } from '../support/service.ts'
import { totp } from '../support/totp.ts'
import { authorizeUrl, pkce } from '../support/oauth-flow.ts'
import { assertClean, axeViolations, fill, launchChromium, openConsole, press, settle, waitForText, type Watched } from '../support/console.ts'

const dataDir = t.testdir()
// The service's clock, moved on by the two-factor test (a TOTP code lives in its own 30 s step only, and works once).
let clockOffset = 0
const service = await startTestService(testConfig(dataDir), { now: () => new Date(Date.now() + clockOffset) })
t.teardown(() => service.close())
const api = client(service.url)
const browser = await launchChromium()
t.teardown(() => browser.close())
const password = 'a long passphrase of mine'

/** The words of each language the test reads and types by (what a person sees). */
const WORDS = {
  en: {
    signIn: 'Sign in',
    createLink: 'Create an account',
    email: 'Email address',
    password: 'Password',
    create: 'Create the account',
    code: 'Confirmation code',
    confirm: 'Confirm',
    overview: 'Overview',
    signOut: 'Sign out',
    mailed: /We sent a confirmation code to/,
    balance: 'Balance'
  },
  fr: {
    signIn: 'Se connecter',
    createLink: 'Créer un compte',
    email: 'Adresse e-mail',
    password: 'Mot de passe',
    create: 'Créer le compte',
    code: 'Code de confirmation',
    confirm: 'Confirmer',
    overview: 'Vue d’ensemble',
    signOut: 'Se déconnecter',
    mailed: /Nous avons envoyé un code de confirmation à/,
    balance: 'Solde'
  }
} as const

/** An access token of the test's own (the API read back), by the API's sign-in. */
async function apiSession(email: string, pass = password): Promise<string> {
  const r = await api('POST', '/api/auth/login', { body: { email, password: pass } })
  if (r.status !== 200) throw new Error(`login ${email}: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.access_token as string
}

async function heading(w: Watched): Promise<string> {
  await w.page.waitForSelector('h1')
  return await w.page.$eval('h1', h => h.textContent ?? '')
}

/** Opens the navigation where it is folded (390 px: behind the menu button). */
async function openNav(w: Watched, menu: string): Promise<void> {
  const folded = await w.page.$eval('.nav-toggle', b => b.checkVisibility())
  if (folded) await press(w.page, menu)
}

for (const [locale, width] of [
  ['en', 1440],
  ['fr', 390],
  ['en', 390],
  ['fr', 1440]
] as const) {
  t.test(`sign up, confirm, reload, sign out, sign in — ${locale} at ${width} px`, async t => {
    const words = WORDS[locale]
    const email = `console-${locale}-${width}@example.com`
    const w = await openConsole(browser, service.url, { width })
    t.teardown(w.close)
    const page = w.page
    await page.goto(`${service.url}/`)
    await waitForText(page, /Sign in/)
    t.match(page.url(), /\/signin$/, 'a signed-out visitor lands on the sign-in page')
    // The positive control: the session check went out and came back, and nothing failed.
    await settle(w)
    t.ok(
      w.requests.some(r => r.url.endsWith('/api/auth/refresh')),
      'the first load asked for a session'
    )
    t.same(w.failing, [], 'a signed-out first load makes no failing request')
    if (locale === 'fr') {
      await press(page, 'Français')
      await waitForText(page, /Se connecter/)
      t.equal(await page.$eval('html', h => h.lang), 'fr', '<html lang> follows the language')
    }
    await press(page, words.createLink, 'link')
    await fill(page, words.email, email)
    await fill(page, words.password, password)
    await press(page, words.create)
    await waitForText(page, words.mailed)
    await waitForText(page, new RegExp(`npx svc mail show --to ${email.replace(/[.]/g, '\\.')}`))
    t.pass('without SMTP_URL the page says where the code was filed')
    const code = await confirmationCode(dataDir, email)
    await fill(page, words.code, code)
    await press(page, words.confirm)
    await waitForText(page, new RegExp(words.balance))
    t.match(page.url(), /\/overview$/)
    t.equal(await heading(w), words.overview)

    const token = await apiSession(email)
    const me = (await api('GET', '/api/users/me', { token })).body
    t.equal(me.email, email, 'the API knows the account the page created')
    t.equal(me.locale, locale, 'in the language the page was in')
    t.equal(me.status, 'confirmed')
    const wallet = (await api('GET', '/api/wallet', { token })).body
    await page.waitForFunction(() => !/…/.test(document.querySelector('[data-testid=balance]')?.textContent ?? '…'))
    const shown = await page.$eval('[data-testid=balance]', e => e.textContent ?? '')
    t.equal(shown.replace(/\D/g, ''), String(wallet.balance), "the balance shown is the wallet's")

    await page.reload()
    await waitForText(page, new RegExp(words.balance))
    t.match(page.url(), /\/overview$/, 'a reload keeps the session (refresh cookie; the token lives in memory only)')
    t.equal(
      await page.evaluate(() => Object.keys(localStorage).filter(k => /token|session/i.test(k)).length + Object.keys(sessionStorage).length),
      0,
      'no token in web storage'
    )

    await openNav(w, 'Menu')
    await press(page, words.signOut)
    await waitForText(page, new RegExp(words.password))
    t.equal(await heading(w), words.signIn)
    await page.reload()
    await waitForText(page, new RegExp(words.password))
    t.equal(await heading(w), words.signIn, 'signed out stays signed out after a reload')

    await fill(page, words.email, email)
    await fill(page, words.password, password)
    await press(page, words.signIn)
    await waitForText(page, new RegExp(words.balance))
    t.match(page.url(), /\/overview$/)
    const sessions = (await api('GET', '/api/users/me/sessions', { token })).body as Array<{ method: string }>
    t.ok(sessions.length >= 2, "the API lists the page's session beside the test's")
    assertClean(t, w, `${locale} ${width}`)
  })
}

for (const width of [1440, 390])
  t.test(`after a validation error, the first click on the button is the one that counts (${width} px)`, async t => {
    const w = await openConsole(browser, service.url, { width })
    t.teardown(w.close)
    const page = w.page
    const email = `first-click-${width}@example.com`
    await page.goto(`${service.url}/signup`)
    await waitForText(page, /Create the account/)
    // Invalid: an address without its domain, a password too short. The browser's checks refuse it.
    await fill(page, WORDS.en.email, 'first-click')
    await fill(page, WORDS.en.password, 'short')
    await press(page, WORDS.en.create)
    await page.waitForSelector('[slot="errorMessage"], .react-aria-FieldError')
    t.pass('the errors are shown (the positive control)')
    // Corrected, the pointer's one click on the button, from the field still being typed in.
    await fill(page, WORDS.en.email, email)
    await fill(page, WORDS.en.password, password)
    const sent = (): number => w.requests.filter(r => r.method === 'POST' && r.url.endsWith('/api/auth/register')).length
    t.equal(sent(), 0, 'nothing sent while the form was invalid')
    await press(page, WORDS.en.create)
    await waitForText(page, WORDS.en.mailed)
    t.equal(sent(), 1, 'one click, one request')
    // Read back from the service: the code was filed for this address.
    t.match(await confirmationCode(dataDir, email), /^\d{6}$/)
    assertClean(t, w, 'the sign-up page')
  })

t.test('the two-factor challenge: a TOTP code, then a backup code', async t => {
  const email = 'console-2fa@example.com'
  const token = await signUp(api, dataDir, email, password)
  const setup = (await api('POST', '/api/users/me/2fa/enable', { token })).body
  // The service accepts a code in its own 30-s step only (no tolerance): each code is made
  // at the start of a step of the service's clock, so that it is still that step when checked.
  const freshCode = (): string => {
    clockOffset += 30_000 - ((Date.now() + clockOffset) % 30_000) + 100
    return totp(setup.secret, Date.now() + clockOffset)
  }
  t.equal((await api('POST', '/api/users/me/2fa/verify-setup', { token, body: { code: freshCode() } })).status, 204)
  for (const [how, code] of [
    ['TOTP', freshCode],
    ['backup code', () => setup.backup_codes[0] as string]
  ] as const) {
    const w = await openConsole(browser, service.url)
    const page = w.page
    await page.goto(`${service.url}/signin`)
    await fill(page, 'Email address', email)
    await fill(page, 'Password', password)
    await press(page, 'Sign in')
    await waitForText(page, /authenticator app/)
    await fill(page, 'Code', code())
    await press(page, 'Verify')
    await waitForText(page, /Balance/)
    t.match(page.url(), /\/overview$/, `signed in with a ${how}`)
    assertClean(t, w, how)
    await w.close()
  }
  const again = await api('POST', '/api/auth/login', { body: { email, password } })
  const reused = await api('POST', '/api/auth/2fa/verify', { body: { temp_token: again.body.temp_token, code: setup.backup_codes[0] } })
  t.equal(reused.status, 401, 'the backup code the page used is spent (the API refuses it now)')
})

t.test('forgot and reset the password through the mailed link', async t => {
  const email = 'console-forgot@example.com'
  await signUp(api, dataDir, email, password)
  const w = await openConsole(browser, service.url, { width: 390 })
  t.teardown(w.close)
  const page = w.page
  await page.goto(`${service.url}/signin`)
  await press(page, 'Forgot your password?', 'link')
  await fill(page, 'Email address', email)
  await press(page, 'Send the reset link')
  await waitForText(page, /is on its way/)
  const link = await mailedLink(dataDir, email, '/reset-password')
  t.equal(link.origin, service.url, 'the mailed link points at this service')
  await page.goto(link.href)
  await fill(page, 'New password', 'another long passphrase')
  await press(page, 'Set the password')
  await waitForText(page, /Your password is changed/)
  t.equal((await api('POST', '/api/auth/login', { body: { email, password } })).status, 401, 'the old password no longer works')
  t.equal((await api('POST', '/api/auth/login', { body: { email, password: 'another long passphrase' } })).status, 200, 'the new one does')
  assertClean(t, w, 'reset')
})

t.test("the lockout's 429 is said as a wait, not an error", async t => {
  const email = 'console-locked@example.com'
  await signUp(api, dataDir, email, password)
  const w = await openConsole(browser, service.url)
  t.teardown(w.close)
  const page = w.page
  await page.goto(`${service.url}/signin`)
  await fill(page, 'Email address', email)
  for (let i = 0; i < 6; i++) {
    await fill(page, 'Password', `wrong guess number ${i}`)
    const answered = page.waitForResponse(r => r.url().endsWith('/api/auth/login'))
    await press(page, 'Sign in')
    if ((await answered).status() === 429) break
  }
  await waitForText(page, /Too many attempts/)
  t.equal(await page.$$eval('[role=alert]', a => a.length), 0, 'no error alert')
  t.match(await page.$eval('[role=status]', s => s.textContent ?? ''), /Try again in/, 'a wait, with when')
  t.equal((await api('POST', '/api/auth/login', { body: { email, password } })).status, 429, 'the API says the account is locked')
  assertClean(t, w, 'lockout')
})

t.test('signed-out pages by keyboard alone, and axe finds nothing serious on them', async t => {
  const email = 'console-keyboard@example.com'
  await signUp(api, dataDir, email, password)
  for (const width of [1440, 390]) {
    const w = await openConsole(browser, service.url, { width })
    const page = w.page
    for (const path of ['/signin', '/signup', '/forgot', '/reset-password?token=x']) {
      await page.goto(`${service.url}${path}`)
      await page.waitForSelector('h1')
      t.same(await axeViolations(page), [], `axe: ${path} at ${width} px`)
    }
    await page.goto(`${service.url}/signin`)
    await page.waitForSelector('h1')
    // Tab from the top of the page: the language switch (two buttons), then the email and password fields.
    const focused = async (): Promise<string> =>
      await page.evaluate(() => {
        const a = document.activeElement as HTMLElement | null
        return a ? `${a.tagName.toLowerCase()}:${(a as HTMLInputElement).type ?? ''}:${a.matches(':focus-visible')}` : ''
      })
    let seen = ''
    for (let i = 0; i < 6 && !seen.startsWith('input:email'); i++) {
      await page.keyboard.press('Tab')
      seen = await focused()
    }
    t.equal(seen, 'input:email:true', 'Tab reaches the email field, its focus visible')
    await page.keyboard.type(email)
    await page.keyboard.press('Tab')
    t.equal(await focused(), 'input:password:true', 'then the password field')
    await page.keyboard.type(password)
    await page.keyboard.press('Enter')
    await waitForText(page, /Balance/)
    t.match(page.url(), /\/overview$/, 'signed in by keyboard alone')
    assertClean(t, w, `keyboard ${width}`)
    await w.close()
  }
})

t.test("the OAuth consent page wears the console's look, names the service, links to sign-up and forgot-password", async t => {
  const reg = await api('POST', '/oauth/register', { body: { client_name: 'Console look app', redirect_uris: ['http://127.0.0.1:9/callback'] } })
  const { challenge } = pkce()
  for (const width of [1440, 390]) {
    const w = await openConsole(browser, service.url, { width })
    const page = w.page
    await page.goto(
      service.url +
        authorizeUrl({
          client_id: reg.body.client_id,
          redirect_uri: 'http://127.0.0.1:9/callback',
          response_type: 'code',
          code_challenge: challenge,
          code_challenge_method: 'S256',
          scope: 'results:read',
          state: 's'
        })
    )
    await waitForText(page, /Console look app/)
    t.match(await page.$eval('.brand', e => e.textContent), 'Email verification', 'the service is named')
    const sheet = await page.evaluate(() => Array.from(document.styleSheets).map(s => s.href ?? 'inline'))
    t.same(sheet, [`${service.url}/theme.css`], "one style sheet: the console's")
    t.equal(
      await page.$eval('button[value=signin]', b => getComputedStyle(b).backgroundColor),
      'rgb(11, 92, 173)',
      "the console's accent on the button (the sheet applied)"
    )
    t.same(await page.$$eval('main a', as => as.map(a => a.getAttribute('href'))), ['/forgot', '/signup'], 'forgot-password and sign-up')
    t.same(await axeViolations(page), [], `axe: the consent page at ${width} px`)
    const overflow = (await page.evaluate(() => document.documentElement.scrollWidth)) - width
    t.ok(overflow <= 0, `fits ${width} px`)
    assertClean(t, w, `consent ${width}`)
    await w.close()
  }
})
