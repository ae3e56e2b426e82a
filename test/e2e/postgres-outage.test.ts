// PostgreSQL stopped under load, then started again: `svc serve` on a private server of the
// test's own (Debian's binaries), eight clients submitting test-key jobs, each with an
// Idempotency-Key of its own. While the server is down every answer that needs it is a 503
// `store.unreachable` with Retry-After (never a 500, never a hang), `/healthz` answers,
// `/readyz` says the database is unreachable; once it is back the service serves again by
// itself. The refused submissions are sent again with their keys: every key ends as exactly
// one job in the database, every job completed once. The oracles: the HTTP answers, and the
// server's own `events` table read with a client of this test.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { client, signUp } from '../support/service.ts'
import { startSvc, svcEnv } from '../support/processes.ts'
import { unlimitedRates } from '../support/plans.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { startSubmissionLoad } from '../support/submission-load.ts'
import { cannotRunPrivatePostgres, startPrimary } from '../support/pg-cluster.ts'

const why = cannotRunPrivatePostgres()
if (why !== null) {
  if (process.env.REQUIRE_POSTGRES === '1') t.fail(`${why}, and REQUIRE_POSTGRES=1`)
  else t.plan(0, why)
} else {
  t.test('stopped under load: 503 with Retry-After, /readyz says why, the service recovers, nothing lost or doubled', async t => {
    const server = await startPrimary(t)
    const admin = new pg.Client({ connectionString: server.url() })
    await admin.connect()
    await admin.query('CREATE DATABASE svc')
    await admin.end()
    const dataDir = t.testdir()
    const metricsToken = randomUUID()
    const svc = await startSvc(
      t,
      ['serve'],
      svcEnv(dataDir, { DATABASE_URL: server.url('svc'), DATABASE_POOL_SIZE: '4', METRICS_TOKEN: metricsToken, ...unlimitedRates(dataDir) })
    )
    const api = client(svc.url)
    const token = await signUp(api, dataDir, 'outage@example.com')
    const key = (await api('POST', '/api/keys', { token, body: { name: 'load', environment: 'test' } })).body.raw_key as string

    const { keys, answers, refused, submit, stop } = startSubmissionLoad(api, key, 8)
    const readyz = async (): Promise<{ status: number; body: any }> => {
      const r = await fetch(`${svc.url}/readyz`, { headers: { authorization: `Bearer ${metricsToken}` } })
      return { status: r.status, body: await r.json() }
    }

    await waitUntil(() => answers.filter(a => a.status === 202).length >= 40, 60_000)
    t.equal((await readyz()).status, 200, 'ready under load before the outage')
    await server.stop('fast')
    const stoppedAt = answers.length
    t.comment(`PostgreSQL stopped after ${stoppedAt} answers`)
    await waitUntil(() => answers.slice(stoppedAt).filter(a => a.status === 503).length >= 20, 60_000)
    const down = await readyz()
    t.equal(down.status, 503, '/readyz: not ready while the database is down')
    t.match(down.body.reasons, [{ component: 'postgresql', problem: 'unreachable', detail: /.+/ }], 'and it says why (the detail to the metrics token)')
    t.same(await fetch(`${svc.url}/healthz`).then(r => r.json()), { status: 'ok' }, '/healthz answers: the process is alive')
    const during = await api('GET', '/api/wallet', { token })
    t.equal(during.status, 503, 'a read that needs the database: 503 too')
    t.equal(during.body.code, 'store.unreachable', 'with its code')

    await server.start()
    const restartedAt = Date.now()
    let last: { status: number; body: any } | null = null
    await waitUntil(async () => (last = await readyz()).status === 200, 60_000).catch(err => {
      throw new Error(`not ready 60 s after PostgreSQL started: ${JSON.stringify(last?.body)}`, { cause: err })
    })
    t.comment(`ready again ${Date.now() - restartedAt} ms after PostgreSQL started`)
    const back = answers.length
    await waitUntil(() => answers.slice(back).filter(a => a.status === 202).length >= 20, 60_000)
    await stop()

    const unexpected = answers.filter(a => a.status !== 202 && a.status !== 200 && a.status !== 503)
    t.same(unexpected, [], 'no answer but 202, 200 (a replay) or 503: no 500')
    const refusals = answers.filter(a => a.status === 503)
    t.ok(refusals.length >= 20, `${refusals.length} submissions refused while it was down`)
    t.ok(
      refusals.every(a => a.code === 'store.unreachable' && a.retry_after === '5'),
      'each refusal is store.unreachable with Retry-After: 5'
    )

    // The refused ones, sent again with their keys: a replay (200) where the write was made before the connection was lost, else a new job.
    const resent = [...refused]
    const statuses = []
    for (const idem of resent) statuses.push(await submit(idem))
    t.ok(
      statuses.every(s => s === 200 || s === 202),
      `the ${resent.length} refused, sent again: ${statuses.filter(s => s === 200).length} replays, ${statuses.filter(s => s === 202).length} new (${statuses.join(' ')})`
    )
    t.equal(refused.size, 0, 'every submission accepted in the end')

    const db = new pg.Client({ connectionString: server.url('svc') })
    await db.connect()
    t.teardown(() => db.end())
    const jobs = (await db.query<{ stream: string }>(`SELECT stream FROM events WHERE type = 'JobQueued'`)).rows
    t.equal(jobs.length, keys.length, `${keys.length} keys, one job each in the database: nothing lost, nothing doubled`)
    t.equal(new Set(jobs.map(j => j.stream)).size, jobs.length, 'each in a stream of its own')
    await waitUntil(
      async () =>
        Number((await db.query<{ n: string }>(`SELECT count(DISTINCT stream) AS n FROM events WHERE type = 'JobCompleted'`)).rows[0].n) === keys.length,
      60_000
    )
    const twice = await db.query(`SELECT stream FROM events WHERE type = 'JobCompleted' GROUP BY stream HAVING count(*) > 1`)
    t.equal(twice.rowCount, 0, 'no job completed twice')
    t.notMatch(svc.output(), /"level":50[^\n]*unhandled error/, 'no unhandled error logged')
  })
}
