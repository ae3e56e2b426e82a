// The console's signed-in flows in headless Chromium,
// each ending in the state the API reports: verify an address (the card, the
// suggestion as a link), jobs (filters, sorts, detail), a list (upload, the detected
// column, the estimate, progress, results by verdict, the downloaded file), API keys and
// agents (the raw secret shown once works, rename, revoke), webhooks (the signing secret
// checked with node:crypto on a delivery of the test's own receiver, disable, edit, the
// deliveries log), billing (the plan grid, no Stripe here said plainly; with a local Stripe
// the checkout redirect is the session Stripe created), notifications (marked seen),
// the overview (the period chosen is the query sent), the account (language, email and
// password changes, two-factor on and off, sessions, deletion). Then axe-core on every
// page at 1440 and 390 px, and no page wider than its window. The oracles: the mail
// world's records, the outbox, the API read back with the test's own session, the
// receiver's requests, the local Stripe's calls, TOTP codes computed with node:crypto.
// This file owns 127.0.106.0/24.
import t from 'tap'
import { createHmac } from 'node:crypto'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { parse } from 'csv-parse/sync'
import { join } from 'node:path'
import type { Page } from 'puppeteer-core'
import { startMailWorld } from '../support/mail-world.ts'
import { client, mailedLink, signUp, startTestService, testConfig } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { totp } from '../support/totp.ts'
import { startFakeStripe } from '../support/stripe-server.ts'
import {
  assertClean,
  axeViolations,
  downloadsTo,
  fill,
  launchChromium,
  openConsole,
  press,
  settle,
  textOf,
  toggle,
  waitForText,
  type Watched
} from '../support/console.ts'

const world = await startMailWorld({
  dns_ip: '127.0.106.1',
  domains: [{ name: 'console-world.com', mx: [{ preference: 10, exchange: 'mx.console-world.com' }] }],
  hosts: [
    {
      name: 'mx.console-world.com',
      ip: '127.0.106.2',
      rcpt: a => (/^(jane|john|mary)@/i.test(a) ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 User unknown' })
    }
  ]
})
t.teardown(() => world.close())
const dataDir = t.testdir()
// The service's clock: the two-factor steps move it on (a TOTP code lives in its own 30 s step and works once).
let clockOffset = 0
const service = await startTestService(
  testConfig(dataDir, { VERIFIER_DNS_SERVERS: world.dns_server, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_BASE_MS: '50' }),
  { now: () => new Date(Date.now() + clockOffset) }
)
t.teardown(() => service.close())
const api = client(service.url)
/**
 * A TOTP code of a step the service has not seen: its clock moved to 100 ms into the next
 * 30 s step, so the step cannot end while the page is typed and sent (the service accepts a
 * code in its own step only).
 */
const freshCode = (secret: string): string => {
  clockOffset += 30_000 - ((Date.now() + clockOffset) % 30_000) + 100
  return totp(secret, Date.now() + clockOffset)
}
const browser = await launchChromium()
t.teardown(() => browser.close())
const password = 'a long passphrase of mine'
const email = 'console-customer@example.com'
const token = await signUp(api, dataDir, email, password)

/** A page signed in as `who` (through the sign-in form), at `width`. */
async function signedIn(width = 1440, who = email, pass = password): Promise<Watched> {
  const w = await openConsole(browser, service.url, { width })
  await w.page.goto(`${service.url}/signin`)
  await fill(w.page, 'Email address', who)
  await fill(w.page, 'Password', pass)
  await press(w.page, 'Sign in')
  await waitForText(w.page, /Balance/)
  return w
}

/** Goes to a console path the way a person does: through the navigation. */
async function visit(w: Watched, name: string): Promise<void> {
  if (await w.page.$eval('.nav-toggle', b => b.checkVisibility())) await press(w.page, 'Menu')
  await press(w.page, name, 'link')
  await w.page.waitForFunction((n: string) => document.querySelector('h1')?.textContent === n, { timeout: 60_000 }, name)
}

/** Picks `option` in the select labelled `label` (React Aria's Select: a button, then a list box). */
async function choose(page: Page, label: string, option: string): Promise<void> {
  await page.evaluate((text: string) => {
    const l = Array.from(document.querySelectorAll('.react-aria-Select .react-aria-Label')).find(x => x.textContent === text)
    ;(l?.closest('.react-aria-Select')?.querySelector('button') as HTMLButtonElement | null)?.click()
  }, label)
  await page.locator(`::-p-aria([name="${option}"][role="option"])`).setTimeout(10_000).click()
}

const jobsOf = async (query = ''): Promise<Array<Record<string, any>>> => (await api('GET', `/api/jobs?limit=100${query}`, { token })).body.items

t.test('verify one address: the card says what the API says; the suggestion is a link that verifies it', async t => {
  const w = await signedIn()
  t.teardown(w.close)
  const page = w.page
  await visit(w, 'Verify')
  await fill(page, 'Email address', 'jane@console-world.com')
  await press(page, 'Verify')
  await page.waitForSelector('[data-testid=result] .badge')
  const job = (await jobsOf()).find(j => j.email === 'jane@console-world.com')!
  t.equal(job.verdict, 'valid', 'the mail world accepts jane')
  const card = await page.$eval('[data-testid=result]', e => (e as HTMLElement).innerText)
  t.match(card, /Valid/, 'the verdict')
  t.match(card, /Mailbox accepted/, 'the reason in plain words')
  t.match(card, /Send/, 'what to do')
  t.match(card, new RegExp(`Score\\s+${String(job.score)}`), 'the score the API has')
  const full = (await api('GET', `/api/jobs/${job.uuid}`, { token })).body
  for (const c of full.result.checks)
    t.match(
      card,
      new RegExp(
        {
          syntax: 'Syntax',
          typo: 'Typo',
          disposable: 'Disposable',
          role: 'Role',
          free: 'Free provider',
          dns: 'DNS \\(MX\\)',
          smtp: 'Mailbox \\(SMTP\\)',
          catch_all: 'Catch-all'
        }[c.name as string]!
      ),
      `the check ${String(c.name)}`
    )
  t.ok(
    world.connection_log.some(c => c.commands.some(l => /RCPT TO:<jane@console-world.com>/i.test(l))),
    'the mail world was asked about jane'
  )

  // The API call the page made, as curl, the credential elided.
  const curl = await page.$eval('details.api pre', e => e.textContent ?? '')
  t.match(curl, /curl -sSf -X POST "\$B\/api\/verify"/)
  t.match(curl, /authorization: Bearer \$TOKEN/)
  t.notMatch(curl, /eyJ/, 'no token in it')

  await fill(page, 'Email address', 'jane@gmial.com')
  await press(page, 'Verify')
  await waitForText(page, /Did you mean/)
  const typo = (await jobsOf()).find(j => j.email === 'jane@gmial.com')!
  const suggestion = (await api('GET', `/api/jobs/${typo.uuid}`, { token })).body.result.did_you_mean as string
  t.equal(suggestion, 'jane@gmail.com', 'the API suggests the correction')
  await press(page, suggestion)
  await waitUntil(async () => (await jobsOf()).some(j => j.email === suggestion))
  t.pass('following the suggestion verified it (the API has its job)')
  assertClean(t, w, 'verify')
})

t.test("jobs: filters and sorts are the API's; a job's detail", async t => {
  const w = await signedIn(390)
  t.teardown(w.close)
  const page = w.page
  await visit(w, 'Jobs')
  const all = await jobsOf()
  await waitForText(page, new RegExp(`^${all.length} jobs$`, 'm'))
  await toggle(page, 'Invalid')
  const invalid = await jobsOf('&verdict=invalid')
  await waitForText(page, new RegExp(`^${invalid.length} jobs$`, 'm'))
  const shown = await page.$$eval('tbody tr td:nth-child(2)', tds => tds.map(td => td.textContent))
  t.same(shown.sort(), invalid.map(j => j.email).sort(), "the rows are the API's invalid jobs")
  t.ok(
    w.requests.some(r => /\/api\/jobs\?.*verdict=invalid/.test(r.url)),
    'the filter went to the API'
  )
  await press(page, 'Score')
  await page.waitForSelector('th[aria-sort=descending] ::-p-text(Score)')
  t.ok(
    w.requests.some(r => /sort=score/.test(r.url)),
    'sorting asks the API'
  )
  // A prefix long enough to be one job's (UUIDv7: the first 12 hex digits are the creation time).
  // Typed a key at a time, each a request: a shorter prefix may show one job already, so the
  // page's request for the whole prefix is waited for before its answer is read.
  const prefix = String(invalid[0].uuid).slice(0, 28)
  await Promise.all([page.waitForResponse(r => r.url().includes(`search=${prefix}`)), fill(page, 'Search', prefix)])
  await waitForText(page, /^1 job$/m)
  t.ok(
    w.requests.some(r => r.url.includes(`search=${prefix}`)),
    "the search is the API's uuid prefix"
  )
  // By address, as typed by a person (another case): the API's list for that address.
  const address = String(invalid[0].email)
  const byAddress = (await api('GET', `/api/jobs?limit=100&environment=live&search=${encodeURIComponent(address)}`, { token })).body.total as number
  t.ok(byAddress >= 1, 'the API finds the address (positive control)')
  await Promise.all([page.waitForResponse(r => r.url().includes('search=') && r.url().includes('%40')), fill(page, 'Search', address.toUpperCase())])
  await waitForText(page, byAddress === 1 ? /^1 job$/m : new RegExp(`^${byAddress} jobs$`, 'm'))
  t.pass(`searching ${address.toUpperCase()} lists its ${byAddress} job(s), as the API does`)
  await press(page, invalid[0].email, 'link')
  await page.waitForSelector('[data-testid=result]')
  t.match(page.url(), new RegExp(`/jobs/${String(invalid[0].uuid)}$`))
  t.match(await page.$eval('[data-testid=result]', e => (e as HTMLElement).innerText), /Invalid/)
  assertClean(t, w, 'jobs')
})

t.test('a list: upload, the detected column, the estimate, progress, results by verdict, the download', async t => {
  const dir = join(dataDir, 'list-upload')
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'customers.csv')
  writeFileSync(
    file,
    '\uFEFFname,email,company\nJane,jane@console-world.com,"Acme, Inc."\nJohn,john@console-world.com,Acme\nJane again,jane@console-world.com,Acme\nMary,mary@console-world.com,Beta\nNobody,nobody@console-world.com,Beta\nBad,not-an-address,Gamma\n'
  )
  const w = await signedIn()
  t.teardown(w.close)
  const page = w.page
  const downloads = join(dir, 'downloads')
  mkdirSync(downloads)
  const downloaded = await downloadsTo(page, downloads)
  await visit(w, 'Lists')
  const input = await page.$('input[type=file]')
  await input!.uploadFile(file)
  await waitForText(page, /6 rows, 5 unique addresses/)
  t.match(await page.$eval('.react-aria-Select .react-aria-SelectValue', e => e.textContent), /^email$/, 'the address column was detected')
  // The rows as the service read them, before anything is paid, the address column marked: the file's own lines are the oracle.
  const previewRows = await page.$$eval('[data-testid=row-preview] tbody tr', rows => rows.map(r => [...r.querySelectorAll('td')].map(c => c.textContent)))
  t.same(
    previewRows,
    [
      ['Jane', 'jane@console-world.com', 'Acme, Inc.'],
      ['John', 'john@console-world.com', 'Acme'],
      ['Jane again', 'jane@console-world.com', 'Acme'],
      ['Mary', 'mary@console-world.com', 'Beta'],
      ['Nobody', 'nobody@console-world.com', 'Beta']
    ],
    'the first five rows of the file'
  )
  t.same(
    await page.$$eval('[data-testid=row-preview] td.picked', cells => cells.map(c => c.textContent)),
    ['jane@console-world.com', 'john@console-world.com', 'jane@console-world.com', 'mary@console-world.com', 'nobody@console-world.com'],
    'the address column marked'
  )
  t.match(await textOf(page), /1 values are not addresses/)
  const balance = (await api('GET', '/api/wallet', { token })).body.balance as number
  const config = (await api('GET', '/api/config')).body
  const perAddress = (config.default_checks as string[]).reduce((s, c) => s + (config.check_costs[c] as number), 0)
  t.match(
    await page.$eval('[data-testid=estimate]', e => e.textContent),
    `${4 * perAddress} tokens of your ${balance.toLocaleString('en')}`,
    'the cost against the balance'
  )
  await press(page, 'Start verifying')
  await page.waitForFunction(() => /\/lists\/[0-9a-f-]{36}$/.test(location.pathname))
  const uuid = page.url().split('/').pop()!
  await waitForText(page, /^Completed$/m, 20_000)
  const batch = (await api('GET', `/api/batches/${uuid}`, { token })).body
  t.equal(batch.name, 'customers.csv', "the list keeps the file's name")
  // The past lists' table follows the card, without a reload: the same status and count, and when it was made.
  const row = async (): Promise<string> =>
    await page.$$eval('tbody tr', rows => rows.map(r => (r as HTMLElement).innerText).find(text => text.includes('customers.csv')) ?? '')
  await waitUntil(async () => /Completed/.test(await row()), 10_000).catch(() => undefined)
  t.match(await row(), new RegExp(`Completed\\s+${batch.progress.processed} / ${batch.progress.total}`), 'the table says what the card says')
  t.match(await row(), /\d{4}/, 'with the date it was made')
  t.equal(batch.progress.total, 5, 'five unique values (one not an address) went to the API')
  t.equal(batch.duplicates, 0, 'the page sent each address once (the repeated row stays in the file)')
  for (const v of ['valid', 'risky', 'invalid', 'unknown']) {
    t.equal(await page.$eval(`[data-testid=count-${v}]`, e => e.textContent), String(batch.results.by_verdict[v]), `the ${v} count is the API's`)
  }
  t.equal(batch.results.by_verdict.valid, 3, 'jane, john and mary are valid in the mail world')
  await press(page, 'Download the results only (CSV)')
  const resultsFile = await downloaded()
  t.match(resultsFile, /-results\.csv$/)
  const fromApi = await (
    await fetch(`${service.url}/api/batches/${uuid}/results`, { headers: { authorization: `Bearer ${token}`, accept: 'text/csv' } })
  ).text()
  t.equal(readFileSync(resultsFile, 'utf8'), fromApi, "the downloaded results are the API's")

  // The customer's own file, with its columns and the results: kept, and downloaded again from another browser.
  t.match(await page.$eval('[data-testid=kept]', e => e.textContent), /kept, sealed, until/)
  await press(page, 'Download your file with the results')
  t.equal(await downloaded(), join(downloads, 'customers-verified.csv'))
  const mine = readFileSync(join(downloads, 'customers-verified.csv'))
  const rows = parse(mine, { bom: true }) as string[][]
  t.same(rows[0].slice(0, 5), ['name', 'email', 'company', 'verdict', 'reason'], 'its own columns first, then the results')
  t.same(
    rows.slice(1).map(r => [r[0], r[1], r[2], r.at(-1)]),
    [
      ['Jane', 'jane@console-world.com', 'Acme, Inc.', 'verified'],
      ['John', 'john@console-world.com', 'Acme', 'verified'],
      ['Jane again', 'jane@console-world.com', 'Acme', 'duplicate'],
      ['Mary', 'mary@console-world.com', 'Beta', 'verified'],
      ['Nobody', 'nobody@console-world.com', 'Beta', 'verified'],
      ['Bad', 'not-an-address', 'Gamma', 'verified']
    ],
    'every row of the file, in order'
  )
  t.same(
    rows.slice(1).map(r => r[3]),
    ['valid', 'valid', 'valid', 'valid', 'invalid', 'invalid'],
    "with the mail world's verdicts"
  )
  // By segment: the clean list is the customer's own file, valid rows only (the whole file filtered here is the oracle).
  await press(page, `Valid only (clean list) (${batch.results.by_verdict.valid})`)
  t.equal(await downloaded(), join(downloads, 'customers-valid.csv'))
  const clean = parse(readFileSync(join(downloads, 'customers-valid.csv')), { bom: true }) as string[][]
  t.same(clean, [rows[0], ...rows.slice(1).filter(r => r[3] === 'valid')], 'the valid rows of the file with its header, in order')
  assertClean(t, w, 'lists')
  await w.close()
  const other = await signedIn(390)
  t.teardown(other.close)
  const downloads2 = join(dir, 'downloads-2')
  mkdirSync(downloads2)
  const downloaded2 = await downloadsTo(other.page, downloads2)
  await other.page.goto(`${service.url}/lists/${uuid}`)
  await press(other.page, 'Download your file with the results')
  t.equal(await downloaded2(), join(downloads2, 'customers-verified.csv'))
  t.same(readFileSync(join(downloads2, 'customers-verified.csv')), mine, 'from a new browser: the same file')
  assertClean(t, other, 'lists, another browser')
})

t.test('API keys and agents: the secret shown once works, rename, change checks, revoke', async t => {
  const w = await signedIn(390)
  t.teardown(w.close)
  const page = w.page
  await visit(w, 'API keys')
  await fill(page, 'Name', 'crm sync')
  await press(page, 'Create the key')
  await page.waitForSelector('[data-testid=secret]')
  const raw = await page.$eval('[data-testid=secret]', e => e.textContent ?? '')
  t.match(raw, /^svc_(?!test_)/, 'a live key (a test key would start svc_test_)')
  t.equal((await api('GET', '/api/jobs?limit=1', { token: raw })).status, 200, 'the key shown works against the API')
  const key = ((await api('GET', '/api/keys', { token })).body as Array<Record<string, any>>).find(k => k.name === 'crm sync')!
  t.ok(key, 'the API lists it by the name typed')
  await press(page, 'Edit')
  await page.waitForSelector('[role=dialog]')
  const nameInDialog = await page.$('[role=dialog] input')
  await nameInDialog!.click({ count: 3 })
  await page.keyboard.press('Backspace')
  await nameInDialog!.type('crm sync (nightly)')
  await toggle(page, 'Catch-all', '[role=dialog]')
  await press(page, 'Save')
  await waitUntil(async () =>
    ((await api('GET', '/api/keys', { token })).body as Array<Record<string, any>>).some(
      k => k.uuid === key.uuid && k.name === 'crm sync (nightly)' && !(k.enabled_checks as string[]).includes('catch_all')
    )
  )
  t.pass('renamed, and catch-all turned off, as the API reads')
  await press(page, 'Revoke')
  await page.waitForSelector('[role=alertdialog]')
  await press(page, 'Revoke')
  await waitUntil(async () => (await api('GET', '/api/jobs?limit=1', { token: raw })).status === 401)
  t.pass('revoked: the API refuses the key')

  await page.evaluate(() => {
    document.getElementById('agents-h')?.scrollIntoView()
  })
  const agentName = await page.$$('input[name=agent-name]')
  await agentName[0].type('research assistant')
  await press(page, 'Create the agent')
  await page.waitForSelector('section[aria-labelledby=agents-h] [data-testid=secret]')
  const agentToken = await page.$eval('section[aria-labelledby=agents-h] [data-testid=secret]', e => e.textContent ?? '')
  t.equal((await api('GET', '/api/jobs?limit=1', { token: agentToken })).status, 200, "the agent's token works")
  const agents = (await api('GET', '/api/agents', { token })).body.items as Array<Record<string, any>>
  t.ok(
    agents.some(a => a.name === 'research assistant'),
    'the API lists the agent'
  )
  await page.waitForSelector('section[aria-labelledby=agents-h] tbody tr button')
  await page.locator('section[aria-labelledby=agents-h] tbody tr button').click()
  await page.waitForSelector('[role=alertdialog]')
  await page.locator('[role=alertdialog] button.danger').click()
  await waitUntil(async () => (await api('GET', '/api/jobs?limit=1', { token: agentToken })).status === 401)
  t.pass('the agent revoked: the API refuses its token')

  await fill(page, 'Name', 'staging')
  await toggle(page, 'Test: sandbox answers, free')
  await press(page, 'Create the key')
  await page.waitForFunction(() => /^svc_test_/.test(document.querySelector('section[aria-labelledby=new-key-h] [data-testid=secret]')?.textContent ?? ''))
  const testKey = await page.$eval('section[aria-labelledby=new-key-h] [data-testid=secret]', e => e.textContent ?? '')
  const sandboxed = await api('POST', '/api/verify', { token: testKey, body: { email: 'someone@console-world.com' } })
  t.equal(sandboxed.status, 202, 'a test key, as chosen')
  t.equal(((await api('GET', '/api/keys', { token })).body as Array<Record<string, any>>).find(k => k.name === 'staging')?.environment, 'test')
  assertClean(t, w, 'keys')
})

t.test('webhooks: the signing secret signs a test delivery; disable; edit; the deliveries log', async t => {
  const received: Array<{ headers: IncomingMessage['headers']; body: string }> = []
  const receiver = createServer((req, res) => {
    let body = ''
    req.on('data', c => {
      body += c
    })
    req.on('end', () => {
      received.push({ headers: req.headers, body })
      res.statusCode = 204
      res.end()
    })
  })
  await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    receiver.close()
  })
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  const w = await signedIn()
  t.teardown(w.close)
  const page = w.page
  await visit(w, 'Webhooks')
  await fill(page, 'Endpoint URL', url)
  await fill(page, 'Description', 'CRM')
  // No event chosen: said on the page, nothing sent; then one click with an event chosen creates it.
  const eventBox = 'form ::-p-text(job.completed)'
  await page.locator(eventBox).click()
  await press(page, 'Add the endpoint')
  await waitForText(page, /Choose at least one event\./)
  t.equal(w.requests.filter(r => r.method === 'POST' && r.url.endsWith('/api/webhooks')).length, 0, 'nothing sent without an event')
  await page.locator(eventBox).click()
  await press(page, 'Add the endpoint')
  await page.waitForSelector('[data-testid=secret]')
  const secret = await page.$eval('[data-testid=secret]', e => e.textContent ?? '')
  await press(page, url, 'link')
  await press(page, 'Send a test event')
  await waitUntil(() => received.length > 0)
  const delivery = received[0]
  const header = String(delivery.headers['x-service-signature'])
  const [, ts, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)!
  t.equal(v1, createHmac('sha256', secret).update(`${ts}.${delivery.body}`).digest('hex'), 'the secret shown signs what the endpoint received')
  await waitForText(page, /answered 204/)
  await page.waitForFunction(() => document.querySelectorAll('tbody tr').length > 0)
  t.match(await page.$eval('tbody tr', e => (e as HTMLElement).innerText), /204/, 'the deliveries log shows the answer')
  const hook = ((await api('GET', '/api/webhooks', { token })).body as Array<Record<string, any>>)[0]
  t.equal(hook.url, url)
  t.equal(hook.description, 'CRM')
  await toggle(page, 'Active')
  await waitUntil(async () => (await api('GET', `/api/webhooks/${String(hook.uuid)}`, { token })).body.status === 'disabled')
  t.pass('disabled, as the API reads')
  await fill(page, 'Description', 'CRM (staging)')
  await press(page, 'Save')
  await waitUntil(async () => (await api('GET', `/api/webhooks/${String(hook.uuid)}`, { token })).body.description === 'CRM (staging)')
  t.pass('edited, as the API reads')
  assertClean(t, w, 'webhooks')
})

t.test('billing without Stripe: the plan grid, said plainly; transactions and the balance chart', async t => {
  const w = await signedIn(390)
  t.teardown(w.close)
  const page = w.page
  await visit(w, 'Billing')
  await page.waitForSelector('[data-testid=billing-unavailable]')
  t.equal((await api('GET', '/api/config')).body.billing_available, false)
  const plans = (await api('GET', '/api/config')).body.plans as Array<{ name: string }>
  const text = await textOf(page)
  for (const p of plans) t.match(text, p.name, `the plan ${p.name} is on the grid`)
  t.equal(
    (await page.$$eval('button[data-disabled], button[disabled]', b => b.filter(x => /Choose|Buy/.test(x.textContent ?? '')).length)) > 0,
    true,
    'nothing to buy here'
  )
  const grouped = (await api('GET', '/api/wallet/transactions/grouped?limit=25', { token })).body.items as unknown[]
  await page.waitForFunction(
    (n: number) => document.querySelectorAll('section[aria-labelledby=tx-h] tbody tr').length === n,
    { timeout: 60_000 },
    grouped.length
  )
  t.pass(`the ${grouped.length} groups of the ledger are listed`)
  t.ok(await page.$('.chart canvas'), 'the balance chart is drawn')
  assertClean(t, w, 'billing')
})

t.test('billing with a local Stripe: choosing a plan goes to the checkout Stripe created', async t => {
  const stripe = await startFakeStripe()
  t.teardown(() => stripe.close())
  const dir = join(dataDir, 'with-stripe')
  const paying = await startTestService(
    testConfig(dir, { STRIPE_SECRET_KEY: 'sk_test_console', STRIPE_WEBHOOK_SECRET: 'whsec_console', STRIPE_API_URL: stripe.url })
  )
  t.teardown(() => paying.close())
  await signUp(client(paying.url), dir, 'payer@example.com', password)
  const w = await openConsole(browser, paying.url)
  t.teardown(w.close)
  const page = w.page
  await page.goto(`${paying.url}/signin`)
  await fill(page, 'Email address', 'payer@example.com')
  await fill(page, 'Password', password)
  await press(page, 'Sign in')
  await waitForText(page, /Balance/)
  await visit(w, 'Billing')
  await toggle(page, 'Yearly')
  await press(page, 'Choose Starter')
  await waitUntil(() => w.foreign.length > 0)
  const session = stripe.calls.find(c => c.path === '/v1/checkout/sessions')!
  t.equal(session.params['line_items[0][price]'] !== undefined || session.params.mode !== undefined, true, 'Stripe was asked for a checkout session')
  t.same(
    w.foreign.map(f => f.type),
    ['document'],
    'the only request elsewhere is the page going to the checkout'
  )
  t.match(w.foreign[0].url, /^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_/, 'the checkout Stripe created')
  t.same(w.csp, [])
  t.same(w.errors, [])
})

t.test('notifications: the feed, marked as read through `seen`', async t => {
  const w = await signedIn()
  t.teardown(w.close)
  const page = w.page
  await visit(w, 'Notifications')
  const feed = (await api('GET', '/api/notifications?limit=24', { token })).body.items as Array<{ seen: boolean }>
  t.ok(
    feed.some(n => !n.seen),
    'the API has unread entries (keys and an agent were created)'
  )
  await waitForText(page, /API key was created: crm sync/)
  await press(page, 'Mark all as read')
  await waitUntil(async () => ((await api('GET', '/api/notifications?limit=24', { token })).body.items as Array<{ seen: boolean }>).every(n => n.seen))
  t.pass('every entry is seen, as the API reads')
  assertClean(t, w, 'notifications')
})

t.test("the overview: the period chosen is the query sent; recent jobs are the API's", async t => {
  const w = await signedIn()
  t.teardown(w.close)
  const page = w.page
  await page.waitForSelector('.chart canvas')
  await choose(page, 'Period', 'Last 7 days, by hour')
  await waitUntil(() => w.requests.some(r => /\/api\/stats\/overview\?.*granularity=hour.*days=7/.test(r.url) || /days=7.*granularity=hour/.test(r.url)))
  t.ok(
    w.requests.some(r => /time_zone=/.test(r.url)),
    "in the viewer's time zone"
  )
  // Live mode (the switch is off): the live environment's data, the sandbox's kept apart.
  const recent = (await jobsOf('&environment=live')).slice(0, 5).map(j => j.email as string)
  const shown = await page.$$eval('section[aria-labelledby=recent-jobs-h] li a', a => a.map(x => x.textContent))
  t.same(shown, recent, 'the five most recent live jobs')
  t.ok((await jobsOf('&environment=test')).length > 0, 'the account has sandbox jobs too, not shown in live mode (positive control)')
  t.equal(await page.$eval('[data-testid=plan]', e => e.textContent), (await api('GET', '/api/subscription', { token })).body.plan.name, 'the plan the API has')
  const unread = ((await api('GET', '/api/notifications?limit=10', { token })).body.items as Array<{ seen: boolean }>).filter(n => !n.seen).length
  t.equal(await page.$eval('section[aria-labelledby=unread-h] .stat', e => e.textContent), String(unread), 'the unread count the API has')
  const stats = (await api('GET', `/api/stats/overview?granularity=hour&days=7&time_zone=UTC&environment=live`, { token })).body
  await waitForText(page, new RegExp(`${String(stats.totals.submitted)} submitted`))
  t.pass("the totals are the API's")
  assertClean(t, w, 'overview')
})

t.test('every signed-in page: axe finds nothing serious, nothing wider than the window', async t => {
  for (const width of [1440, 390]) {
    const w = await signedIn(width)
    const jobs = await jobsOf()
    const paths = ['/overview', '/verify', '/lists', '/jobs', `/jobs/${String(jobs[0].uuid)}`, '/keys', '/webhooks', '/billing', '/notifications', '/account']
    const batch = ((await api('GET', '/api/batches', { token })).body.items as Array<{ uuid: string }>)[0]
    const hook = ((await api('GET', '/api/webhooks', { token })).body as Array<{ uuid: string }>)[0]
    paths.push(`/lists/${batch.uuid}`, `/webhooks/${hook.uuid}`)
    for (const path of paths) {
      await w.page.goto(`${service.url}${path}`)
      await w.page.waitForSelector('h1')
      await settle(w)
      t.same(await axeViolations(w.page), [], `axe: ${path} at ${width} px`)
      // Against the width set (a mobile layout viewport widens to fit what overflows).
      const overflow = (await w.page.evaluate(() => document.documentElement.scrollWidth)) - width
      t.ok(overflow <= 0, `${path} at ${width} px fits its window (overflow ${overflow} px)`)
      if (path === '/jobs') {
        // What a row is about is in view without scrolling the table sideways.
        const heads = await w.page.evaluate(() =>
          [...document.querySelectorAll('thead th')].map(th => ({
            text: (th as HTMLElement).innerText.replace(/[▲▼]/g, '').trim(),
            right: th.getBoundingClientRect().right
          }))
        )
        const wanted = heads.filter(h => ['Status', 'Verdict', 'Score'].includes(h.text))
        t.equal(wanted.length, 3, `${path}: the status, verdict and score columns are there`)
        t.same(
          wanted.filter(h => h.right > width).map(h => h.text),
          [],
          `${path} at ${width} px: status, verdict and score in view without scrolling`
        )
      }
    }
    assertClean(t, w, `pages at ${width}`)
    await w.close()
  }
})

t.test('the account: language, email and password changes, two-factor on and off, sessions, deletion', async t => {
  const who = 'console-account@example.com'
  const own = await signUp(api, dataDir, who, password)
  const ownerUuid = (await api('GET', '/api/users/me', { token: own })).body.uuid as string
  const w = await signedIn(1440, who)
  t.teardown(w.close)
  const page = w.page
  // A list first: its file kept under the account in DATA_DIR, until the account goes.
  const listFile = join(dataDir, 'account-list.csv')
  writeFileSync(listFile, 'email,first name\njane@console-world.com,Jane\n')
  await visit(w, 'Lists')
  await (await page.$('input[type=file]'))!.uploadFile(listFile)
  await waitForText(page, /1 rows, 1 unique addresses/)
  await press(page, 'Start verifying')
  await waitForText(page, /^Completed$/m, 20_000)
  t.ok(existsSync(join(dataDir, 'blobs', ownerUuid)), "the list's file is kept under the account in DATA_DIR")
  await visit(w, 'Account')
  await choose(page, 'Language', 'Français')
  await waitForText(page, /Changer le mot de passe/)
  await waitUntil(async () => (await api('GET', '/api/users/me', { token: own })).body.locale === 'fr')
  t.pass("the account's locale, as the API reads")
  await choose(page, 'Langue', 'English')
  await waitForText(page, /Change the password/)

  // Two-factor on: the key beside the QR code, a code computed here.
  await press(page, 'Turn on two-factor')
  await page.waitForSelector('.qr svg')
  const secret = await page.$eval('[data-testid=totp-secret]', e => e.textContent ?? '')
  t.match(await textOf(page), /Backup codes/)
  const box = await page.$$('section[aria-labelledby=twofa-h] input')
  await box[box.length - 1].type(freshCode(secret))
  await press(page, 'Turn on')
  await waitForText(page, /Two-factor authentication is on/)
  // Turning two-factor on ends the account's other sessions (the test's own too): the API's sign-in says it is on.
  await waitUntil(async () => (await api('POST', '/api/auth/login', { body: { email: who, password } })).body.temp_token !== undefined)
  t.pass("on, as the API's sign-in says (a second factor is asked)")

  // Password change (two-factor asks a code again: the next step's).
  await page.evaluate(() => {
    document.getElementById('password-h')?.scrollIntoView()
  })
  const pw = await page.$$('section[aria-labelledby=password-h] input')
  await pw[0].type(password)
  await pw[1].type('a brand new passphrase')
  await pw[2].type(freshCode(secret))
  await page.locator('section[aria-labelledby=password-h] button[type=submit]').click()
  await waitForText(page, /Your password is changed/)
  t.equal((await api('POST', '/api/auth/login', { body: { email: who, password: 'a brand new passphrase' } })).status, 200, 'the new password works at the API')

  // Two-factor off.
  const off = await page.$$('section[aria-labelledby=twofa-h] input')
  await off[0].type('a brand new passphrase')
  await off[1].type(freshCode(secret))
  await press(page, 'Turn off two-factor')
  await waitForText(page, /Two-factor authentication is off\./)
  await waitUntil(
    async () => (await api('POST', '/api/auth/login', { body: { email: who, password: 'a brand new passphrase' } })).body.access_token !== undefined
  )
  t.pass("off, as the API's sign-in says (no second factor)")

  // Sessions: another one (the API's sign-in), revoked from the page.
  const other = await api('POST', '/api/auth/login', { body: { email: who, password: 'a brand new passphrase' } })
  const otherToken = other.body.access_token as string
  await page.reload()
  await waitForText(page, /Sessions/)
  const before = (await api('GET', '/api/users/me/sessions', { token: otherToken })).body as unknown[]
  await page.waitForFunction(
    (n: number) => document.querySelectorAll('section[aria-labelledby=sessions-h] tbody tr').length === n,
    { timeout: 60_000 },
    before.length
  )
  const revokers = await page.$$('section[aria-labelledby=sessions-h] tbody button')
  t.equal(revokers.length, before.length - 1, 'every session but this one can be signed out')
  for (let i = 0; i < revokers.length; i++) {
    await page.locator('section[aria-labelledby=sessions-h] tbody button').click()
    await page.waitForSelector('[role=alertdialog]')
    await page.locator('[role=alertdialog] button.danger').click()
    await page.waitForFunction(
      (n: number) => document.querySelectorAll('section[aria-labelledby=sessions-h] tbody tr').length === n,
      { timeout: 60_000 },
      before.length - i - 1
    )
  }
  t.equal((await api('GET', '/api/users/me', { token: otherToken })).status, 401, 'the other session is over, as the API says')

  // Email change through the mailed link.
  const em = await page.$$('section[aria-labelledby=email-h] input')
  await em[0].type('console-account-new@example.com')
  await em[1].type('a brand new passphrase')
  await page.locator('section[aria-labelledby=email-h] button[type=submit]').click()
  await waitForText(page, /We sent a link to console-account-new@example.com/)
  const link = await mailedLink(dataDir, 'console-account-new@example.com', '/verify-email-change')
  await page.goto(link.href)
  await waitForText(page, /Your email address is changed/)
  const login = await api('POST', '/api/auth/login', { body: { email: 'console-account-new@example.com', password: 'a brand new passphrase' } })
  t.equal(login.status, 200, 'the new address signs in at the API')

  // Deletion, with the password.
  await page.goto(`${service.url}/account`)
  await waitForText(page, /Delete the account/)
  const del = await page.$$('section[aria-labelledby=delete-h] input')
  await del[0].type('a brand new passphrase')
  await page.locator('section[aria-labelledby=delete-h] button.danger').click()
  await page.waitForSelector('[role=alertdialog]')
  await page.locator('[role=alertdialog] button.danger').click()
  await waitForText(page, /Sign in/)
  t.equal(
    (await api('POST', '/api/auth/login', { body: { email: 'console-account-new@example.com', password: 'a brand new passphrase' } })).status,
    401,
    'the account is gone, as the API says'
  )
  await waitUntil(() => !existsSync(join(dataDir, 'blobs', ownerUuid)), 10_000)
  t.pass('its kept file is gone from DATA_DIR')
  assertClean(t, w, 'account')
})
