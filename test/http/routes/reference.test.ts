import { launchHeadlessChromium, openPage } from '../../support/chromium.ts'
import t from 'tap'
import { signUp, build } from '../../support/service.ts'
import { REASONS, VERDICTS } from '../../../src/verifier/vocabulary.ts'

// The result vocabulary and the problem pages: the
// document's enums carry what each verdict and reason means; `/reference/results` says the
// same for people; a problem's `type` resolves to a page about it (RFC 9457 §3.1.1). In
// Debian's headless Chromium: each page renders with no console error and nothing fetched
// from elsewhere. The oracles: problems the service really answered, and the document.
const { dataDir, service, api } = await build(t)
const token = await signUp(api, dataDir, 'reader-of-pages@example.com')
const narrow = (await api('POST', '/api/keys', { token, body: { name: 'narrow', environment: 'test', scopes: ['email:verify:single'] } })).body
  .raw_key as string

t.test("the document's enums carry the vocabulary", async t => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as any
  const reason = doc.components.schemas.Reason
  t.same(reason.enum.sort(), Object.keys(REASONS).sort(), 'every reason, as an enum')
  t.match(reason['x-enumDescriptions'].mailbox_not_found, /does not exist/)
  t.match(doc.components.schemas.Verdict.description, /`unknown`: .*Retry later/s)
  t.ok(doc.components.schemas.Flag && doc.components.schemas.CheckName && doc.components.schemas.CheckOutcome, 'flags, checks and outcomes too')
})

t.test('problems the service answers name a type that resolves to a page about them', async t => {
  const answers = [
    await api('GET', '/api/verify/not-a-uuid', { token }),
    await api('GET', '/api/jobs', { token: 'svc_nope' }),
    await api('GET', '/api/wallet', { token: narrow }),
    await api('GET', '/api/jobs/01a200f4-4e74-7104-92f0-217355e415da', { token })
  ]
  t.same(
    answers.map(a => a.status),
    [400, 401, 403, 404]
  )
  for (const a of answers) {
    const page = await fetch(new URL(a.body.type, service.url))
    t.equal(page.status, 200, `${a.body.type} resolves`)
    t.match(page.headers.get('content-type'), /text\/html/)
    t.match(await page.text(), a.body.code, 'and names the code')
  }
  t.equal((await fetch(`${service.url}/problems/no_such.thing_at_all`)).status, 404, 'an unknown code has no page')
})

t.test('the reference and problem pages render in Chromium with no console error', async t => {
  const browser = await launchHeadlessChromium()
  t.teardown(() => browser.close())
  const origin = new URL(service.url).origin
  for (const path of ['/reference/results', '/problems/submit_job.insufficient_tokens', '/problems/request.invalid_uuid', '/problems/internal_error']) {
    const page = await openPage(browser)
    const errors: string[] = []
    const foreign: string[] = []
    page.on('console', m => {
      if (m.type() === 'error') errors.push(m.text())
    })
    page.on('pageerror', e => {
      errors.push(String(e))
    })
    page.on('requestfailed', r => {
      errors.push(`failed: ${r.url()}`)
    })
    page.on('request', r => {
      if (!r.url().startsWith(origin)) foreign.push(r.url())
    })
    const res = await page.goto(`${service.url}${path}`, { waitUntil: 'networkidle0' })
    t.equal(res?.status(), 200, path)
    t.same(errors, [], `${path}: no console error (the strict CSP let the stylesheet in)`)
    t.same(foreign, [], 'nothing from elsewhere')
    const styled = await page.evaluate(() => getComputedStyle(document.body).fontFamily)
    t.match(styled, /system-ui|sans-serif/, 'its stylesheet applied')
    if (path === '/reference/results') {
      const text = await page.evaluate(() => document.body.innerText)
      for (const v of Object.keys(VERDICTS)) t.match(text, v)
      t.match(text, REASONS.mailbox_not_found.meaning.slice(0, 40), 'the same words as the document')
    }
    await page.close()
  }
})

t.test('every problem code the code base raises has a page', async t => {
  const { readdirSync, readFileSync, statSync } = await import('node:fs')
  const { join } = await import('node:path')
  const { problemType, PROBLEM_REASONS } = await import('../../../src/http/problem-types.ts')
  const files: string[] = []
  const walk = (dir: string): void => {
    for (const f of readdirSync(dir)) {
      const p = join(dir, f)
      if (statSync(p).isDirectory()) walk(p)
      else if (p.endsWith('.ts')) files.push(p)
    }
  }
  walk(new URL('../../../src', import.meta.url).pathname)
  const literal = new Set<string>()
  const templated = new Set<string>()
  for (const f of files) {
    const text = readFileSync(f, 'utf8')
    for (const m of text.matchAll(/(?:DomainError\('[a-z_]+', |HttpProblem\(\d{3}, |fail\('[a-z_]+', |invalid: |OAuthError\()['`]([^'`]+)['`]/g)) {
      if (m[1].includes('${')) templated.add(m[1].split('.').pop()!)
      else if (/^[a-z0-9_]+\.[a-z0-9_]+$/.test(m[1])) literal.add(m[1])
    }
  }
  t.ok(literal.size > 100, `${literal.size} literal codes found (positive control)`)
  t.same([...literal].filter(c => problemType(c) === null).sort(), [], 'each literal code has a page')
  t.same([...templated].filter(r => !/[$}]/.test(r) && PROBLEM_REASONS[r] === undefined).sort(), [], "each templated code's reason has a page")
})
