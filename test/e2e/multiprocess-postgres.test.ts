// The production topology on PostgreSQL and NATS: `svc api` ×2 (requests spread over both),
// `svc projector`, `svc relay`, verifiers ×2 (one SIGKILLed mid-run), webhooks and mailer as
// separate OS processes on one database of the test's own (test/support/topology.ts). The
// oracle reads the database's `events` table with a client of this test. This file owns
// 127.0.51.0/24.
import t from 'tap'
import pg from 'pg'
import { natsAnswers } from '../../src/infra/bus/nats.ts'
import { requirePostgres, testDatabase } from '../support/postgres.ts'
import { runTopology } from '../support/topology.ts'

const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222'
const reachable = await natsAnswers(natsUrl)

if (!reachable && process.env.REQUIRE_NATS === '1') {
  t.fail(`no NATS server answers at ${natsUrl}, and REQUIRE_NATS=1`)
} else if (!reachable) {
  t.plan(0, `no NATS server answers at ${natsUrl} (set NATS_URL; .ci/run starts one)`)
} else if (await requirePostgres(t)) {
  const url = await testDatabase(t, 'topology')
  await runTopology(t, {
    net: '127.0.51',
    nats_url: natsUrl,
    env: { DATABASE_URL: url, DATABASE_POOL_SIZE: '4' },
    apis: 2,
    projector: true,
    events: async () => {
      const db = new pg.Client({ connectionString: url })
      await db.connect()
      try {
        const rows = await db.query<{ stream: string; type: string; data: string }>('SELECT stream, type, data FROM events ORDER BY position')
        return rows.rows.map(r => ({ stream: r.stream, type: r.type, data: JSON.parse(r.data) as Record<string, unknown> }))
      } finally {
        await db.end()
      }
    }
  })
}
