// The production topology on one machine on the embedded store: `svc api`, `svc relay`,
// verifiers ×2, webhooks and mailer as separate OS processes sharing one SQLite event store
// file and the local NATS server (test/support/topology.ts). This file owns 127.0.50.0/24.
import t from 'tap'
import { join } from 'node:path'
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite.ts'
import { natsAnswers } from '../../src/infra/bus/nats.ts'
import { runTopology } from '../support/topology.ts'

const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222'
const reachable = await natsAnswers(natsUrl)

if (!reachable && process.env.REQUIRE_NATS === '1') {
  // CI (`.ci/run` sets REQUIRE_NATS=1): the production topology's tests never pass by skipping.
  t.fail(`no NATS server answers at ${natsUrl}, and REQUIRE_NATS=1`)
} else if (!reachable) {
  t.plan(0, `no NATS server answers at ${natsUrl} (set NATS_URL; .ci/run starts one)`)
} else {
  await runTopology(t, {
    net: '127.0.50',
    nats_url: natsUrl,
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
