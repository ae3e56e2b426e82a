import { DomainError, isBefore, ignoreUnknownEvent, noEventsForUnknown } from '../shared.ts'
import type { IdempotencyKeyClaimed, IdempotencyKeyEvent } from './events.ts'

export type IdempotencyKeyState = { status: 'free' } | { status: 'claimed'; job_uuid: string; request_hash: string; expires_at: string }

export const initialState = (): IdempotencyKeyState => ({ status: 'free' })

export function evolve(state: IdempotencyKeyState, event: IdempotencyKeyEvent): IdempotencyKeyState {
  switch (event.type) {
    case 'IdempotencyKeyClaimed':
      return { status: 'claimed', job_uuid: event.data.job_uuid, request_hash: event.data.request_hash, expires_at: event.data.expires_at }
    case 'IdempotencyKeyReleased':
      return { status: 'free' }
    default:
      return ignoreUnknownEvent(event, state)
  }
}

/** Every event carries the whole state: loading reads the last one only. */
export const snapshot = { types: ['IdempotencyKeyClaimed', 'IdempotencyKeyReleased'] } as const

export type IdempotencyKeyCommand =
  | { type: 'ClaimIdempotencyKey'; data: Omit<IdempotencyKeyClaimed['data'], 'claimed_at'> & { now: string } }
  | { type: 'ReleaseIdempotencyKey'; data: { user_uuid: string; job_uuid: string; reason: string; now: string } }

/** Whether the key stands for a submission now: claimed and not expired. */
export const isHeld = (s: IdempotencyKeyState, now: string): s is Extract<IdempotencyKeyState, { status: 'claimed' }> =>
  s.status === 'claimed' && isBefore(now, s.expires_at)

/**
 * The idempotency key decider (Stripe's convention; interface "200 when the request
 * replays a prior submission").
 * - ClaimIdempotencyKey on a free or expired key → IdempotencyKeyClaimed. On a held key
 *   with the same request hash → nothing: the caller replays the held key's job.
 * - ReleaseIdempotencyKey of the held key's job → IdempotencyKeyReleased; else nothing.
 * @throws DomainError unprocessable `<operation>.idempotency_key_reused` when the held key
 *   was used for a different request.
 */
export function decide(command: IdempotencyKeyCommand, state: IdempotencyKeyState): IdempotencyKeyEvent[] {
  switch (command.type) {
    case 'ClaimIdempotencyKey': {
      const { now, ...d } = command.data
      if (isHeld(state, now)) {
        if (state.request_hash !== d.request_hash)
          throw new DomainError(
            'unprocessable',
            `${d.operation}.idempotency_key_reused`,
            'this Idempotency-Key was used for a different request; use a new key for a new request'
          )
        return []
      }
      return [{ type: 'IdempotencyKeyClaimed', data: { ...d, claimed_at: now } }]
    }
    case 'ReleaseIdempotencyKey': {
      const d = command.data
      if (state.status !== 'claimed' || state.job_uuid !== d.job_uuid) return []
      return [{ type: 'IdempotencyKeyReleased', data: { user_uuid: d.user_uuid, job_uuid: d.job_uuid, reason: d.reason, released_at: d.now } }]
    }
    default:
      return noEventsForUnknown(command)
  }
}
