import type { Event } from '../shared.ts'

/**
 * An `Idempotency-Key` of an account taken for one submission (stream
 * `idempotency_key-<hmac(account, operation, key)>`): the job it stands for and a hash of
 * the request, kept until `expires_at`. Each event carries the key's whole state.
 */
export type IdempotencyKeyClaimed = Event<
  'IdempotencyKeyClaimed',
  {
    user_uuid: string
    operation: string
    job_uuid: string
    request_hash: string
    claimed_at: string
    expires_at: string
  }
>

/** The submission failed (no tokens, say): the key is free for a new request. */
export type IdempotencyKeyReleased = Event<'IdempotencyKeyReleased', { user_uuid: string; job_uuid: string; reason: string; released_at: string }>

export type IdempotencyKeyEvent = IdempotencyKeyClaimed | IdempotencyKeyReleased
