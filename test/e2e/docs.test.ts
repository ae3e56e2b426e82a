import { launchHeadlessChromium, openPage } from '../support/chromium.ts'
import t from 'tap'
import { npmStartNodeFlags, startSvc, svcEnv } from '../support/processes.ts'

// `GET /docs` in headless Chromium (Debian's
// `chromium`, which .ci/run installs): the rendered page lists the operations, and the
// browser fetched nothing from outside the service (issue 42, item 12c: no image from
// validator.swagger.io, no font or style from elsewhere). The page is opened by a name that
// is not loopback (`docs.test`, mapped to 127.0.0.1 in Chromium alone), as a user reaches a
// deployed service: swagger-ui hides its validator badge for localhost and 127.0.0.1 only.

// The service as `npm start` runs it (issue 42's Done-when), its frames checked below on every kind of answer too.
const service = await startSvc(t, ['serve'], svcEnv(t.testdir()), npmStartNodeFlags())
const port = new URL(service.url).port
const origin = `http://docs.test:${port}`

/** Sources a policy may name without reaching another origin: this one, inline hashes and nonces, `data:`, keywords. */
const OWN = /^('self'|'none'|'sha(256|384|512)-[A-Za-z0-9+/=]+'|'nonce-[A-Za-z0-9+/=]+'|data:)$/

t.test('the docs page renders every operation, from the service alone', async t => {
  const browser = await launchHeadlessChromium([`--host-resolver-rules=MAP docs.test 127.0.0.1`])
  t.teardown(() => browser.close())
  const page = await openPage(browser)
  const origins = new Set<string>()
  page.on('request', r => {
    if (!r.url().startsWith('data:')) origins.add(new URL(r.url()).origin)
  })
  // What the page's policy blocked is a load it tried: recorded too.
  const blocked: string[] = []
  await page.exposeFunction('reportViolation', (uri: string) => blocked.push(uri))
  await page.evaluateOnNewDocument(() => {
    document.addEventListener('securitypolicyviolation', e => {
      void (window as unknown as { reportViolation: (u: string) => void }).reportViolation(e.blockedURI)
    })
  })
  const res = await page.goto(`${origin}/docs`, { waitUntil: 'networkidle0' })
  t.equal(res?.status(), 200)
  await page.waitForSelector('.opblock-summary-path')
  const paths = await page.$$eval('.opblock-summary-path', els =>
    els.map(e => (e.getAttribute('data-path') ?? e.textContent ?? '').replace(/\u200b/g, '').trim())
  )
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> }
  const expected = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map(() => path))
  t.same(paths.sort(), expected.sort(), 'one block per operation of /openapi.json')
  for (const p of ['/api/verify', '/api/verify/{uuid}', '/api/keys', '/api/webhooks/{uuid}/deliveries', '/api/auth/login'])
    t.ok(paths.includes(p), `${p} is listed`)
  const text = await page.evaluate(() => document.body.innerText)
  t.match(text, /Email Verification Service/, 'the title')
  t.match(text, /0\.9\.0/, 'the version')
  t.same([...origins], [origin], 'every request went to the service itself')
  t.same(
    blocked.filter(u => /^[a-z][a-z0-9+.-]*:/i.test(u) && !u.startsWith('data:') && new URL(u).origin !== origin),
    [],
    'and none to another origin was attempted'
  )
  t.equal(await page.$('.validator-badge, img[src*="validator"]'), null, 'no validator badge')
})

t.test('the /docs policy names no other origin and is framed nowhere (X-Frame-Options DENY)', async t => {
  for (const path of ['/docs', '/docs/static/index.css', '/docs/static/swagger-initializer.js']) {
    const r = await fetch(`${service.url}${path}`)
    t.equal(r.status, 200, path)
    const policy = r.headers.get('content-security-policy') ?? ''
    const directives = policy
      .split(';')
      .map(d => d.trim().split(/\s+/))
      .filter(([name]) => name !== '')
    t.ok(directives.length > 3, `${path}: a policy (${policy})`)
    const foreign = directives.flatMap(([name, ...sources]) => sources.filter(s => !OWN.test(s)).map(s => `${name} ${s}`))
    t.same(foreign, [], `${path}: every source is this origin, an inline hash or data:`)
    t.match(policy, /frame-ancestors 'none'/, `${path}: framed nowhere`)
    t.equal(r.headers.get('x-frame-options'), 'DENY', `${path}: X-Frame-Options says the same`)
  }
})

t.test('X-Frame-Options: DENY on every kind of answer, as their frame-ancestors say (issue 42, item 12b)', async t => {
  const paths = [
    '/api/config',
    '/api/nowhere',
    '/healthz',
    '/readyz',
    '/openapi.json',
    '/',
    '/signin',
    '/docs',
    '/reference/results',
    '/problems/login.locked',
    '/oauth/authorize'
  ]
  for (const path of paths) {
    const r = await fetch(`${service.url}${path}`)
    t.ok(r.status < 500, `${path}: answered (${r.status})`)
    t.equal(r.headers.get('x-frame-options'), 'DENY', `${path}: X-Frame-Options DENY`)
  }
})
