import t from 'tap'
import { randomUUID } from 'node:crypto'
import { connect } from '@nats-io/transport-node'
import { jetstreamManager } from '@nats-io/jetstream'
import { NatsBus } from '../../../src/infra/bus/nats.ts'
import { NATS_URL, requireNats } from '../../support/nats.ts'
import { busContract, message } from '../../support/bus-contract.ts'
import { waitUntil } from '../../support/eventstore-contract.ts'

const url = NATS_URL

const routes = { verifier: ['JobQueued', 'JobDeferred'], mailer: ['ConfirmationCodeIssued'] }
const made: NatsBus[] = []
const open = async (group: string, ackWaitMs = 30_000, log: (msg: string, err?: unknown) => void = () => {}): Promise<NatsBus> => {
  const bus = await NatsBus.connect(url, { prefix: `test_${group}`, routes, ack_wait_ms: ackWaitMs, drain_ms: 500, log })
  made.push(bus)
  return bus
}

if (await requireNats(t)) {
  t.teardown(async () => {
    const admin = await NatsBus.connect(url, { routes })
    for (const bus of made) await bus.destroy().catch(() => {})
    await admin.close()
  })
  busContract(t, (g, log) => open(g, 30_000, log))

  t.test('an instance that dies before acking has its message redelivered to the other', async t => {
    const group = randomUUID().slice(0, 8)
    const dying = await open(group, 1_000)
    const survivor = await open(group, 1_000)
    const got: string[] = []
    let started = false
    await dying.consume({ name: 'verifier', event_types: ['JobQueued'], concurrency: 1 }, async () => {
      started = true
      await new Promise(() => {}) // never finishes: the process "dies" mid-work
    })
    const m = message('JobQueued', 1)
    await dying.publish(m)
    await waitUntil(() => started)
    await dying.close() // the connection goes away without an ack
    await survivor.consume({ name: 'verifier', event_types: ['JobQueued'], concurrency: 1 }, async e => {
      got.push(e.id)
    })
    await waitUntil(() => got.length === 1, 15_000)
    t.same(got, [m.id])
    await survivor.close()
  })

  t.test('the event id is the Nats-Msg-Id: a second relay publishing the same event adds nothing', async t => {
    const group = randomUUID().slice(0, 8)
    const relay1 = await open(group)
    const relay2 = await open(group)
    const m = message('JobQueued', 7)
    await relay1.publish(m)
    await relay2.publish(m)
    const seen: string[] = []
    await relay1.consume({ name: 'verifier', event_types: ['JobQueued'], concurrency: 1 }, async e => {
      seen.push(e.id)
    })
    await waitUntil(() => seen.length === 1)
    const sentinel = message('JobQueued', 8)
    await relay2.publish(sentinel)
    await waitUntil(() => seen.includes(sentinel.id))
    t.same(seen, [m.id, sentinel.id], 'the duplicate added nothing before the sentinel')
    await relay1.close()
    await relay2.close()
  })
  t.test('a consumer deleted on the server: said, made again, and consuming again', async t => {
    const group = randomUUID().slice(0, 8)
    const said: string[] = []
    const bus = await open(group, 30_000, msg => {
      said.push(msg)
    })
    const got: string[] = []
    const consumer = await bus.consume({ name: 'verifier', event_types: ['JobQueued'], concurrency: 1 }, async e => {
      got.push(e.id)
    })
    const first = message('JobQueued', 1)
    await bus.publish(first)
    await waitUntil(() => got.includes(first.id))
    const nc = await connect({ servers: url })
    const admin = await jetstreamManager(nc)
    await admin.consumers.delete(`TEST_${group}_VERIFIER`.toUpperCase().replace(/[^A-Z0-9_-]/g, '_'), 'verifier')
    await waitUntil(() => said.some(m => /consumer verifier stopped/.test(m)), 15_000)
    await waitUntil(() => said.some(m => /consumer verifier consuming again/.test(m)), 15_000)
    t.equal(consumer.problem, null, 'not down any more')
    const second = message('JobQueued', 2)
    await bus.publish(second)
    await waitUntil(() => got.includes(second.id), 15_000)
    t.same(got, [first.id, second.id], 'the next message arrives, once')
    await nc.close()
    await consumer.stop()
    await bus.close()
  })
}
