import t from 'tap'
import { client, signUp, startTestService, testConfig } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'

// The relay's subscription killed by the store: while the
// store fails its reads, /readyz says the relay is resubscribing (503); once it reads
// again, the relay subscribes again from where it was and catches up, skipping no event:
// every job submitted meanwhile reaches the verifier through the bus and completes, and
// the relay's lag returns to 0. The oracles: the API read back and the event store's head.

const dataDir = t.testdir()
const METRICS_TOKEN = 'metrics-token-for-the-relay-test'
const service = await startTestService(testConfig(dataDir, { METRICS_TOKEN }))
t.teardown(() => service.close())
const api = client(service.url)

// The injected fault: the store's page reads (what every subscription reads) throw while `failing`.
const store = service.core.store as unknown as { page: (...args: unknown[]) => unknown }
const page = store.page.bind(store)
let failing = false
let failed = 0
store.page = (...args: unknown[]) => {
  if (failing) {
    failed++
    throw new Error('injected: the event store failed a read')
  }
  return page(...args)
}

const lag = async (): Promise<number> => {
  const m = /^lag_events\{[^}]*consumer="relay"[^}]*\} (\d+)/m.exec(await service.metrics.text())
  return Number(m?.[1] ?? -1)
}

t.test('not ready while the subscription is down, then caught up with no event skipped', async t => {
  await waitUntil(async () => (await api('GET', '/readyz')).status === 200, 20_000)
  const token = await signUp(api, dataDir, 'relay@example.com')
  const key = (await api('POST', '/api/keys', { token, body: { name: 'test', environment: 'test' } })).body.raw_key as string
  // A positive control: a job completes while all is well.
  const first = await api('POST', '/api/verify', { token: key, body: { email: 'valid@relay-corp.com' } })
  await waitUntil(async () => (await api('GET', `/api/verify/${first.body.uuid}`, { token: key })).body.status === 'completed', 20_000)

  failing = true
  // Submitted together: each answer waits (boundedly) for the read models, which the fault stops too.
  const during = await Promise.all(
    [0, 1, 2, 3, 4].map(async i => (await api('POST', '/api/verify', { token: key, body: { email: `user${i}@relay-corp.com` } })).body.uuid as string)
  )
  let readyz: { status: number; body: any } = { status: 0, body: null }
  await waitUntil(async () => {
    // The operator's view (the metrics token): what was seen is theirs to read.
    readyz = await api('GET', '/readyz', { token: METRICS_TOKEN })
    // Both readers of the store meet the fault, each at its next read: the relay's and the projector's.
    const components = readyz.status === 503 ? readyz.body.reasons.map((r: { component: string }) => r.component) : []
    return components.includes('relay') && components.includes('projections')
  }, 20_000)
  t.ok(failed > 0, 'the store failed reads')
  t.match(
    readyz.body.reasons.find((r: { component: string }) => r.component === 'relay'),
    { problem: 'resubscribing', detail: /injected/ },
    'the relay says it is resubscribing, and why (to the operator)'
  )
  t.match(
    (await api('GET', '/readyz')).body.reasons.find((r: { component: string }) => r.component === 'relay'),
    { problem: 'resubscribing', detail: null },
    'anyone else reads the reason, not the error'
  )
  t.equal(readyz.body.status, 'degraded')
  t.match(
    readyz.body.reasons.find((r: { component: string }) => r.component === 'projections'),
    { component: 'projections', problem: 'resubscribing' },
    'the read models, reading the same store, say so too (degraded: they had caught up before)'
  )
  t.equal((await api('GET', '/healthz')).status, 200, 'alive all the while')

  failing = false
  await waitUntil(async () => (await api('GET', '/readyz')).status === 200, 30_000)
  t.pass('ready again')
  for (const uuid of during) await waitUntil(async () => (await api('GET', `/api/verify/${uuid}`, { token: key })).body.status === 'completed', 20_000)
  t.pass('every job submitted while the relay was down completed: their events were published')
  await waitUntil(async () => (await lag()) === 0, 20_000)
  t.equal(await lag(), 0, "the relay's lag is back to 0: it reached the store's head")
})
