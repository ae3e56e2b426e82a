import t from 'tap'
import { react, type ErasureState } from '../../src/flows/delete-account/react.ts'
import type { FlowTrigger } from '../../src/eventsourcing/flow.ts'

// The reaction to an account's deletion, as a specification: given what is left of the
// account, when UserDeleted, then the steps, in order. The oracle: the interface's
// DELETE /api/users/{uuid} (keys and agents revoked, webhooks deleted, the address free
// to register again) and docs/design/architecture.md's crypto-shredding (the key destroyed last: the
// release needs the address the key opens).

const deleted: FlowTrigger = {
  id: 'e-1',
  type: 'UserDeleted',
  data: { user_uuid: 'u-1', deleted_at: '2026-11-29T10:00:00.000Z' },
  metadata: { occurred_at: '2026-11-29T10:00:00.000Z', actor: 'u-1', correlation_id: null, causation_id: null }
}
const everything: ErasureState = { deleted: true, api_keys: true, agents: true, webhooks: true, claimed: true, keyed: true }
const labels = (s: Partial<ErasureState>): string[] => react(deleted, { ...everything, ...s }).map(step => step.label)

t.test('a deletion ends every credential, releases the address, then destroys the key', async t => {
  t.same(labels({}), ['api_keys', 'agents', 'webhooks', 'release', 'shred'], 'all of it, the key last')
  t.ok(
    react(deleted, everything).every(step => step.command.user_uuid === 'u-1'),
    'every step names the deleted account'
  )
})

t.test('only what is left is done: a run after a crash finishes what the first began', async t => {
  t.same(labels({ api_keys: false, agents: false }), ['webhooks', 'release', 'shred'], 'keys and agents revoked already')
  t.same(labels({ api_keys: false, agents: false, webhooks: false, claimed: false }), ['shred'], 'released already: the key')
  t.same(labels({ api_keys: false, agents: false, webhooks: false, claimed: false, keyed: false }), [], 'all done: nothing')
  t.same(labels({ claimed: true, keyed: false, api_keys: false, agents: false, webhooks: false }), [], 'no key, no address to release: nothing')
})

t.test('nothing for an account that is not deleted, nor for another event', async t => {
  t.same(labels({ deleted: false }), [], 'the stream does not say deleted')
  t.same(react({ ...deleted, type: 'UserBanned' }, everything), [], 'another event')
})
