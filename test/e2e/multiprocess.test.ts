// The production topology on one machine on the embedded store: `svc api`, `svc relay`,
// verifiers ×2, webhooks and mailer as separate OS processes sharing one SQLite event store
// file and the local NATS server (test/support/topology.ts). This file owns 127.0.50.0/24.
import t from 'tap'
import { join } from 'node:path'
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite.ts'
import { NATS_URL, requireNats } from '../support/nats.ts'
import { runTopology } from '../support/topology.ts'

if (await requireNats(t)) {
  await runTopology(t, {
    net: '127.0.50',
    nats_url: NATS_URL,
    env: {},
    apis: 1,
    projector: false,
    events: async dataDir => {
      const store = new SqliteEventStore(join(dataDir, 'events.db'), { poll_interval_ms: 0 })
      try {
        return await store.readAll({ from_position: 0, max_count: 1_000_000 })
      } finally {
        await store.close()
      }
    }
  })
}
