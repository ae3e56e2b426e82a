import t from 'tap'
import * as idempotency from '../../../src/domain/idempotency/decider.ts'
import type { IdempotencyKeyCommand } from '../../../src/domain/idempotency/decider.ts'
import type { IdempotencyKeyClaimed, IdempotencyKeyReleased } from '../../../src/domain/idempotency/events.ts'
import { build, spec } from '../../support/decider-spec.ts'

// Idempotency-Key claims (stream `idempotency_key-<hmac(account, operation, key)>`). Interface
// section 4, POST /api/verify: "200 when the request replays a prior submission". Stripe's
// convention (docs, "Idempotent requests"): a key reused with different parameters is an
// error, and keys expire after a while. The refusal is `unprocessable` (422).

const U = 'u-1'
const now = '2026-11-22T10:00:00.000Z'
const beforeExpiry = '2026-11-23T09:59:59.999Z'
const expiry = '2026-11-23T10:00:00.000Z'

// Event builders.
const claimed = build<IdempotencyKeyClaimed>('IdempotencyKeyClaimed', {
  user_uuid: U,
  operation: 'submit_job',
  job_uuid: 'j1',
  request_hash: 'rh1',
  claimed_at: now,
  expires_at: expiry
})
const released = build<IdempotencyKeyReleased>('IdempotencyKeyReleased', { user_uuid: U, job_uuid: 'j1', reason: 'insufficient_tokens', released_at: now })

// Command builders.
const claimKey = (over: Partial<Omit<IdempotencyKeyClaimed['data'], 'claimed_at'>> = {}, when = now): IdempotencyKeyCommand => ({
  type: 'ClaimIdempotencyKey',
  data: { user_uuid: U, operation: 'submit_job', job_uuid: 'j1', request_hash: 'rh1', expires_at: expiry, ...over, now: when }
})
const releaseKey = (job = 'j1', when = now): IdempotencyKeyCommand => ({
  type: 'ReleaseIdempotencyKey',
  data: { user_uuid: U, job_uuid: job, reason: 'insufficient_tokens', now: when }
})

t.test('ClaimIdempotencyKey: one submission per key until it expires', async t => {
  const k = spec(t, idempotency)
  k([]).when(claimKey()).then([claimed()], "a free key is claimed for the job, with the request's hash, until its expiry")
  k([claimed()])
    .when(claimKey({ job_uuid: 'j2' }, beforeExpiry))
    .thenNothing('the same request again: nothing (the caller replays j1: 200)')
  k([claimed()])
    .when(claimKey({ job_uuid: 'j2', request_hash: 'rh2' }, beforeExpiry))
    .thenRejects('submit_job.idempotency_key_reused', 422, 'the key used for a different request is refused (422)')
  k([claimed({ operation: 'create_batch' })])
    .when(claimKey({ operation: 'create_batch', request_hash: 'rh2' }))
    .thenRejects('create_batch.idempotency_key_reused', 422, 'the code names the operation')
  k([claimed()])
    .when(claimKey({ job_uuid: 'j2', request_hash: 'rh2', expires_at: '2026-11-24T10:00:00.000Z' }, expiry))
    .then(
      [claimed({ job_uuid: 'j2', request_hash: 'rh2', claimed_at: expiry, expires_at: '2026-11-24T10:00:00.000Z' })],
      'at its expiry the key is free again, for any request'
    )
  k([claimed(), released()])
    .when(claimKey({ job_uuid: 'j2', request_hash: 'rh2' }))
    .then([claimed({ job_uuid: 'j2', request_hash: 'rh2' })], 'a released key is free for a new request')
  k([claimed()]).thenState(s => idempotency.isHeld(s, beforeExpiry), true, 'held before its expiry')
  k([claimed()]).thenState(s => idempotency.isHeld(s, expiry), false, 'not held from its expiry on')
})

t.test('ReleaseIdempotencyKey: the failed submission frees its key', async t => {
  const k = spec(t, idempotency)
  k([claimed()]).when(releaseKey()).then([released()], 'the job the key stands for releases it')
  k([claimed()]).when(releaseKey('j2')).thenNothing('another job cannot release it')
  k([]).when(releaseKey()).thenNothing('a free key: nothing')
  k([claimed(), released()]).when(releaseKey()).thenNothing('released already: nothing')
  k([claimed(), released()]).thenState(s => s.status, 'free', 'a released key is free')
})
