// Failover: a primary with a synchronous streaming standby (Debian's `initdb`, `pg_basebackup`,
// `pg_ctl promote`, on loopback ports of the test's own), `svc serve` reaching them through a
// forwarder that stands for the address a deployment moves on failover (a virtual IP, a DNS
// name, HAProxy). Under load the primary is killed as a crash would (`pg_ctl stop -m
// immediate`), the standby promoted and the address moved to it. Said: how long writes were
// refused. Held: every submission the service acknowledged (202) before the crash is in the
// new primary's log (synchronous replication: a commit is acknowledged only once the standby
// has it); every refused one, sent again with its Idempotency-Key, ends as exactly one job.
// The oracles: the HTTP answers, and the new primary's `events` table read by this test.
import t from 'tap'
import pg from 'pg'
import { client, signUp } from '../support/service.ts'
import { startSvc, svcEnv } from '../support/processes.ts'
import { unlimitedRates } from '../support/plans.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { startSubmissionLoad } from '../support/submission-load.ts'
import { cannotRunPrivatePostgres, startForwarder, startPrimary, startStandby } from '../support/pg-cluster.ts'

const why = cannotRunPrivatePostgres()
if (why !== null) {
  if (process.env.REQUIRE_POSTGRES === '1') t.fail(`${why}, and REQUIRE_POSTGRES=1`)
  else t.plan(0, why)
} else {
  t.test('primary killed, synchronous standby promoted: writes again, no acknowledged write lost', async t => {
    const primary = await startPrimary(t, { synchronous_standby: 'standby1' })
    const standby = await startStandby(t, primary, 'standby1')
    const admin = new pg.Client({ connectionString: primary.url() })
    await admin.connect()
    await admin.query('CREATE DATABASE svc')
    const sync = await admin.query<{ application_name: string; sync_state: string }>('SELECT application_name, sync_state FROM pg_stat_replication')
    await admin.end()
    t.same(sync.rows, [{ application_name: 'standby1', sync_state: 'sync' }], 'the standby streams, synchronously')

    const address = await startForwarder(t, primary.port)
    const url = `postgres://postgres@127.0.0.1:${address.port}/svc`
    const dataDir = t.testdir()
    const svc = await startSvc(t, ['serve'], svcEnv(dataDir, { DATABASE_URL: url, DATABASE_POOL_SIZE: '4', ...unlimitedRates(dataDir) }))
    const api = client(svc.url)
    const token = await signUp(api, dataDir, 'failover@example.com')
    const key = (await api('POST', '/api/keys', { token, body: { name: 'load', environment: 'test' } })).body.raw_key as string

    const { keys, answers, acknowledged, refused, submit, stop } = startSubmissionLoad(api, key, 4)

    await waitUntil(() => acknowledged.size >= 40, 60_000)
    const killedAt = Date.now()
    await primary.stop('immediate')
    const before = [...acknowledged.entries()].filter(([, a]) => a.at <= killedAt)
    // What a failover tool does once it has seen the primary gone: promote the standby, move the address.
    await standby.promote()
    address.retarget(standby.port)
    const movedAt = Date.now()
    await waitUntil(() => answers.some(a => a.at > movedAt && a.status === 202), 60_000)
    const firstWrite = answers.find(a => a.at > movedAt && a.status === 202)!.at
    const lastBefore = Math.max(...answers.filter(a => a.at <= killedAt && a.status === 202).map(a => a.at))
    t.comment(
      `writes refused for ${firstWrite - lastBefore} ms: crash to promotion and address moved ${movedAt - killedAt} ms, then ${firstWrite - movedAt} ms to the first accepted write`
    )
    t.ok(firstWrite - movedAt < 30_000, `writing again ${firstWrite - movedAt} ms after the address moved (bound: 30 s)`)
    let readiness: unknown = null
    await waitUntil(async () => {
      const r = await fetch(`${svc.url}/readyz`)
      readiness = await r.json()
      return r.status === 200
    }, 60_000).catch(err => {
      throw new Error(`not ready 60 s after the failover: ${JSON.stringify(readiness)}`, { cause: err })
    })
    const accepted = acknowledged.size
    await waitUntil(() => acknowledged.size >= accepted + 20, 60_000)
    await stop()
    t.same(
      answers.filter(a => ![200, 202, 503].includes(a.status)),
      [],
      'no answer but 202, 200 (a replay) or 503 (the database unreachable): no 500'
    )
    for (const idem of [...refused]) await submit(idem)
    t.equal(refused.size, 0, 'each refused submission accepted when sent again with its key')

    const db = new pg.Client({ connectionString: standby.url('svc') })
    await db.connect()
    t.teardown(() => db.end())
    t.equal((await db.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0].r, false, 'the standby is the primary now')
    const queued = new Set((await db.query<{ stream: string }>(`SELECT stream FROM events WHERE type = 'JobQueued'`)).rows.map(r => r.stream))
    const lost = before.filter(([, a]) => !queued.has(`job-${a.uuid}`))
    t.same(lost, [], `all ${before.length} submissions acknowledged before the crash are on the new primary`)
    t.equal(queued.size, keys.length, `${keys.length} keys, ${queued.size} jobs: nothing lost, nothing doubled`)
    await waitUntil(
      async () =>
        Number((await db.query<{ n: string }>(`SELECT count(DISTINCT stream) AS n FROM events WHERE type = 'JobCompleted'`)).rows[0].n) === keys.length,
      60_000
    )
    t.pass('every job completed on the new primary')
  })
}
