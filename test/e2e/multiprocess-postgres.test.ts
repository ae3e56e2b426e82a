// The production topology on PostgreSQL and NATS: `svc api` ×2 (requests spread over both),
// `svc projector`, `svc relay`, verifiers ×2 (one SIGKILLed mid-run), webhooks and mailer as
// separate OS processes on one database of the test's own (test/support/topology.ts). The
// oracle reads the database's `events` table with a client of this test. This file owns
// 127.0.51.0/24.
import t from 'tap'
import pg from 'pg'
import { NATS_URL, requireNats } from '../support/nats.ts'
import { requirePostgres, testDatabase } from '../support/postgres.ts'
import { runTopology } from '../support/topology.ts'

if ((await requireNats(t)) && (await requirePostgres(t))) {
  const url = await testDatabase(t, 'topology')
  await runTopology(t, {
    net: '127.0.51',
    nats_url: NATS_URL,
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
