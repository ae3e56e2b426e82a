import t from 'tap'
import * as claim from '../../../src/domain/claim/decider.ts'
import type { ClaimCommand } from '../../../src/domain/claim/decider.ts'
import type { ClaimReleased, ValueClaimed } from '../../../src/domain/claim/events.ts'
import { build, spec } from '../../support/decider-spec.ts'

// Uniqueness claims (docs/design/architecture.md "Streams and events": one account per email, one job per
// idempotency key, claimed on a stream named after a blind index). Interface section 3:
// registering an address that exists answers "the same 204"; section 4: an email change to a
// taken address answers 409 — the claim is what says "taken".

const now = '2026-11-22T10:00:00.000Z'
const later = '2026-11-23T10:00:00.000Z'

// Event builders.
const claimed = build<ValueClaimed>('ValueClaimed', { owner_uuid: 'u-1', claimed_at: now })
const released = build<ClaimReleased>('ClaimReleased', { owner_uuid: 'u-1', released_at: now })

// Command builders.
const claimFor = (owner: string, when = now): ClaimCommand => ({ type: 'ClaimValue', data: { owner_uuid: owner, now: when } })
const releaseBy = (owner: string, when = now): ClaimCommand => ({ type: 'ReleaseValue', data: { owner_uuid: owner, now: when } })

t.test('ClaimValue: a value belongs to one owner at a time', async t => {
  const c = spec(t, claim)
  c([]).when(claimFor('u-1')).then([claimed()], 'a free value is claimed by its first owner')
  c([claimed()]).when(claimFor('u-2', later)).thenNothing('a value another owner holds is not taken (the caller reads the owner: taken)')
  c([claimed()]).when(claimFor('u-1', later)).thenNothing("claiming one's own value again changes nothing (a retried registration)")
  c([claimed(), released()])
    .when(claimFor('u-2', later))
    .then([claimed({ owner_uuid: 'u-2', claimed_at: later })], 'a released value can be claimed again (an address of a deleted account)')
  c([claimed()]).thenState(s => s.owner_uuid, 'u-1', 'the claim names its owner')
  c([claimed(), released(), claimed({ owner_uuid: 'u-2' })]).thenState(s => s.owner_uuid, 'u-2', 'the latest event carries the whole state')
})

t.test('ReleaseValue: only the owner lets go', async t => {
  const c = spec(t, claim)
  c([claimed()])
    .when(releaseBy('u-1', later))
    .then([released({ released_at: later })], 'the owner releases its value')
  c([claimed()]).when(releaseBy('u-2')).thenNothing('someone else cannot release it')
  c([]).when(releaseBy('u-1')).thenNothing('a value never claimed: nothing to release')
  c([claimed(), released()]).when(releaseBy('u-1')).thenNothing('releasing twice: nothing')
  c([claimed(), released()]).thenState(s => s.owner_uuid, null, 'a released value has no owner')
})
