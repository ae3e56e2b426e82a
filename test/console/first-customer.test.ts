// A new customer, scripted in Chromium from `/` to a downloaded clean list: sign up, confirm
// with the mailed code, the first screen's steps, upload, the preview with the address
// column, start (tokens spent), the clean list downloaded (valid rows only) — on the
// simulated mail world (this file owns 127.0.160.0/24 and 127.0.161.0/24). Then the same
// customer on a network whose port 25 is blocked (the egress self-test's MX refuses), in
// French at 390 px: told so on the page, in their words, and finishing in test mode. The
// oracles: the outbox's mail (the code), the mail world's rule for each address and the
// sandbox's documented answers (valid@, invalid@, accept-all@), the file the test wrote,
// and the API read back with a session of the test's own.
import t from 'tap'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { startMailWorld } from '../support/mail-world.ts'
import { client, confirmationCode, startTestService, testConfig } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { assertClean, axeViolations, downloadsTo, fill, launchChromium, openConsole, press, textOf, waitForText, type Watched } from '../support/console.ts'

const browser = await launchChromium()
t.teardown(() => browser.close())
const password = 'a long passphrase of mine'

/** Signs a new customer up from `/` as a person does: the link to create an account, the form, the mailed code. */
async function signUpFromRoot(
  w: Watched,
  url: string,
  dataDir: string,
  email: string,
  words: { create: string; email: string; password: string; submit: string; code: string; confirm: string }
): Promise<void> {
  await w.page.goto(`${url}/`)
  await press(w.page, words.create, 'link')
  await fill(w.page, words.email, email)
  await fill(w.page, words.password, password)
  await press(w.page, words.submit)
  await fill(w.page, words.code, await confirmationCode(dataDir, email))
  await press(w.page, words.confirm)
}

/** Rows of a CSV file (a byte-order mark read as such). */
const rowsOf = (path: string): string[][] => parse(readFileSync(path), { bom: true }) as string[][]

t.test('from / to a downloaded clean list on the simulated world', async t => {
  const world = await startMailWorld({
    dns_ip: '127.0.160.1',
    domains: [{ name: 'first-customer.com', mx: [{ preference: 10, exchange: 'mx.first-customer.com' }] }],
    hosts: [
      {
        name: 'mx.first-customer.com',
        ip: '127.0.160.2',
        rcpt: a => (a.startsWith('ok.') ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 User unknown' })
      }
    ]
  })
  t.teardown(() => world.close())
  const dataDir = t.testdir()
  const service = await startTestService(testConfig(dataDir, { VERIFIER_DNS_SERVERS: world.dns_server }))
  t.teardown(() => service.close())
  const api = client(service.url)
  const list = join(dataDir, 'newsletter.csv')
  const lines = [
    'first name,email,signed up',
    'Ann,ok.ann@first-customer.com,2026-01-04',
    'Bob,ok.bob@first-customer.com,2026-02-11',
    'Carl,gone.carl@first-customer.com,2026-03-20',
    'Ann (again),OK.Ann@first-customer.com,2026-04-02',
    'Dee,ok.dee@first-customer.com,2026-05-15',
    'Typo,not-an-address,2026-06-30'
  ]
  writeFileSync(list, `${lines.join('\n')}\n`)
  const w = await openConsole(browser, service.url)
  t.teardown(w.close)
  const downloads = join(dataDir, 'downloads')
  mkdirSync(downloads)
  const downloaded = await downloadsTo(w.page, downloads)

  const began = Date.now()
  await signUpFromRoot(w, service.url, dataDir, 'first@example.com', {
    create: 'Create an account',
    email: 'Email address',
    password: 'Password',
    submit: 'Create the account',
    code: 'Confirmation code',
    confirm: 'Confirm'
  })
  await waitForText(w.page, /Get started/)
  t.match(await textOf(w.page), /Upload a list/, 'the first screen says what to do')
  await press(w.page, 'Upload a list', 'link')
  await (await w.page.waitForSelector('input[type=file]'))!.uploadFile(list)
  await waitForText(w.page, /6 rows, 5 unique addresses/)
  t.same(
    await w.page.$$eval('[data-testid=row-preview] td.picked', cells => cells.map(c => c.textContent)),
    lines.slice(1, 6).map(l => l.split(',')[1]),
    "the preview marks the file's address column"
  )
  t.same(await axeViolations(w.page), [], 'axe: the list previewed before paying')
  await press(w.page, 'Start verifying')
  await w.page.waitForFunction(() => /\/lists\/[0-9a-f-]{36}$/.test(location.pathname))
  const uuid = w.page.url().split('/').pop()!
  await waitForText(w.page, /^Completed$/m, 60_000)
  await press(w.page, 'Valid only (clean list) (3)')
  const clean = await downloaded()
  const took = Date.now() - began
  t.same(await axeViolations(w.page), [], 'axe: the completed list with its segments')
  t.equal(clean, join(downloads, 'newsletter-valid.csv'))
  // The oracle: the file's own rows whose address the world accepts (its rule: `ok.` mailboxes exist), the header kept.
  const cells = lines.map(l => l.split(','))
  t.same(
    rowsOf(clean).map(r => r.slice(0, 3)),
    [cells[0], ...cells.slice(1).filter(r => r[1].toLowerCase().startsWith('ok.'))],
    "the clean list: the customer's own rows, valid ones only, repeats included"
  )
  // Read back with a session of the test's own: what the page showed is the API's.
  const token = (await api('POST', '/api/auth/login', { body: { email: 'first@example.com', password } })).body.access_token as string
  const batch = (await api('GET', `/api/batches/${uuid}`, { token })).body
  t.match(batch, { environment: 'live', status: 'completed', progress: { total: 5 }, results: { by_verdict: { valid: 3, invalid: 2 } } })
  t.ok(batch.tokens.captured > 0, 'live checks: tokens spent')
  t.equal((await api('GET', '/api/wallet', { token })).body.balance, 1_000 - batch.tokens.captured, 'the Free grant less what the list cost')
  t.comment(`from / to the clean list on disk: ${(took / 1000).toFixed(1)} s`)
  assertClean(t, w, 'the first customer')
})

t.test('port 25 blocked: told so on the page, in French at 390 px, and finishing in test mode', async t => {
  // The egress self-test's MX has an address where nothing listens: every connection to port 25 is refused.
  const world = await startMailWorld({
    dns_ip: '127.0.161.1',
    domains: [],
    hosts: [],
    records: [{ name: 'mx.selftest-blocked.com', type: 'A', data: '127.0.161.50' }]
  })
  t.teardown(() => world.close())
  const dataDir = t.testdir()
  const service = await startTestService(
    testConfig(dataDir, {
      VERIFIER_DNS_SERVERS: world.dns_server,
      VERIFIER_EGRESS_TEST_INTERVAL_S: '0.5',
      VERIFIER_EGRESS_TEST_MX: 'mx.selftest-blocked.com',
      VERIFIER_SMTP_TIMEOUT_MS: '1000'
    })
  )
  t.teardown(() => service.close())
  const api = client(service.url)
  await waitUntil(async () => {
    const r = await api('GET', '/readyz')
    return r.status === 503 && r.body.reasons.some((x: { component: string; problem: string }) => x.component === 'egress' && x.problem === 'port_25_blocked')
  }, 30_000)
  t.pass('the self-test finds port 25 blocked (positive control)')
  const list = join(dataDir, 'clients.csv')
  const lines = ['email', 'valid@northwind-traders.com', 'invalid@northwind-traders.com', 'accept-all@northwind-traders.com', 'paul@northwind-traders.com']
  writeFileSync(list, `${lines.join('\n')}\n`)
  const w = await openConsole(browser, service.url, { width: 390 })
  t.teardown(w.close)
  const downloads = join(dataDir, 'downloads')
  mkdirSync(downloads)
  const downloaded = await downloadsTo(w.page, downloads)
  await w.page.goto(`${service.url}/`)
  await press(w.page, 'Français')
  await signUpFromRoot(w, service.url, dataDir, 'bloque@example.com', {
    create: 'Créer un compte',
    email: 'Adresse e-mail',
    password: 'Mot de passe',
    submit: 'Créer le compte',
    code: 'Code de confirmation',
    confirm: 'Confirmer'
  })
  await waitForText(w.page, /Les vérifications réelles sont en attente/)
  const said = await textOf(w.page)
  t.match(said, /son réseau bloque les connexions sortantes vers le port 25/, 'why, in the customer’s words')
  t.match(said, /attend jusqu'à 1\s+heure/, 'how long a live check would wait')
  t.notMatch(said, /selftest|127\.0\.|refused|ECONNREFUSED/, "never the operator's detail")
  t.same(await axeViolations(w.page), [], 'axe: the overview saying live checks are held')
  await press(w.page, 'passez en mode test')
  await waitForText(w.page, /Mode test\./)
  t.same(await axeViolations(w.page), [], 'axe: test mode, its banner')
  await press(w.page, 'Importer une liste', 'link')
  await (await w.page.waitForSelector('input[type=file]'))!.uploadFile(list)
  await waitForText(w.page, /0 jeton/)
  t.notMatch(await textOf(w.page), /vérifications réelles sont en attente/, 'no hold in test mode: the sandbox needs no mail server')
  await press(w.page, 'Lancer la vérification')
  await w.page.waitForFunction(() => /\/lists\/[0-9a-f-]{36}$/.test(location.pathname))
  const uuid = w.page.url().split('/').pop()!
  await waitForText(w.page, /^Terminée$/m, 60_000)
  await press(w.page, 'Valides seulement (liste propre) (2)')
  const clean = await downloaded()
  // The sandbox's documented answers: `valid@` and any other local part valid, `invalid@` invalid, `accept-all@` risky.
  t.same(
    rowsOf(clean).map(r => r[0]),
    ['email', 'valid@northwind-traders.com', 'paul@northwind-traders.com'],
    'the clean list of the sandbox'
  )
  const token = (await api('POST', '/api/auth/login', { body: { email: 'bloque@example.com', password } })).body.access_token as string
  t.equal((await api('GET', '/api/users/me', { token })).body.locale, 'fr', 'French, chosen before the account existed, is its language')
  const batch = (await api('GET', `/api/batches/${uuid}`, { token })).body
  t.match(batch, { environment: 'test', status: 'completed', results: { by_verdict: { valid: 2, invalid: 1, risky: 1 } }, tokens: { reserved: 0 } })
  t.equal((await api('GET', '/api/wallet', { token })).body.balance, 1_000, 'test mode spent nothing')
  t.ok(await w.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'nothing wider than 390 px')
  assertClean(t, w, 'the blocked customer')
})
