import { launchHeadlessChromium, openPage } from '../support/chromium.ts'
import t from 'tap'
import { startTestService, testConfig } from '../support/service.ts'

// `GET /docs` (issue "The interface described", scope 3) in headless Chromium (Debian's
// `chromium`, which .ci/run installs): the rendered page lists the operations, and the
// browser fetched nothing from outside the service.

const service = await startTestService(testConfig(t.testdir()))
t.teardown(() => service.close())

t.test('the docs page renders every operation, from the service alone', async t => {
  const browser = await launchHeadlessChromium()
  t.teardown(() => browser.close())
  const page = await openPage(browser)
  const origin = new URL(service.url).origin
  const foreign: string[] = []
  page.on('request', r => {
    if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) foreign.push(r.url())
  })
  const res = await page.goto(`${service.url}/docs`, { waitUntil: 'networkidle0' })
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
  t.same(foreign, [], 'no request left the service')
})
