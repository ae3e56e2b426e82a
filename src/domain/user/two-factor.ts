import { DomainError } from '../shared.ts'
import type { UserEvent } from './events.ts'
import type { Account, TwoFactorState, UserState } from './state.ts'

/** Wrong two-factor codes in a row that lock the second step, and for how long (ms). */
export const TWO_FACTOR_FAILURES_BEFORE_LOCK = 5
const TWO_FACTOR_LOCK_MS = 15 * 60_000
/** Sign-in challenges remembered as spent (a challenge lives 5 minutes; far fewer are completed in that time). */
export const SPENT_CHALLENGES = 16

export const TWO_FACTOR_OFF: TwoFactorState = { status: 'off', secret: null, backup_code_hashes: [], last_step: -1, failures: [] }

/** The challenges spent once `id` is (the latest SPENT_CHALLENGES). */
export const spend = (tf: TwoFactorState, id: string | undefined): string[] =>
  id === undefined ? (tf.used_challenges ?? []) : [...(tf.used_challenges ?? []), id].slice(-SPENT_CHALLENGES)

/**
 * A second factor as checked by the command handler against the secret it read: the TOTP
 * time step the code matches (null when it matches none), for the sealed secret
 * `for_secret`, and the HMAC of the code read as a backup code.
 */
export interface SecondFactor {
  for_secret: string | null
  time_step: number | null
  backup_code_hash: string
  challenge_id?: string
}

/** Constant-time comparison of two hashes (hex strings). */
export function sameHash(a: string, b: string): boolean {
  let diff = a.length ^ b.length
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  return diff === 0
}

/** Whether the two-factor step is locked now (too many wrong codes recently). */
export function twoFactorLocked(state: UserState, now: string): boolean {
  if (state.status === 'none') return false
  const f = state.two_factor.failures
  return f.length >= TWO_FACTOR_FAILURES_BEFORE_LOCK && Date.parse(now) - Date.parse(f[f.length - 1]) < TWO_FACTOR_LOCK_MS
}

/**
 * The second factor of an active two-factor setup (RFC 6238 §5.2: a step is accepted
 * once): a TOTP code of a step after the last accepted one → TwoFactorCodeAccepted; an
 * unused backup code → BackupCodeUsed (spent); anything else → TwoFactorFailed, which the
 * command handler reports as `<operation>.invalid_code` after appending it.
 * @throws DomainError locked `<operation>.locked` after TWO_FACTOR_FAILURES_BEFORE_LOCK recent failures.
 */
export function secondFactor(state: Account, f: SecondFactor & { operation: string; now: string }): UserEvent[] {
  if (twoFactorLocked(state, f.now)) throw new DomainError('locked', `${f.operation}.locked`, 'too many wrong codes; try again later')
  const tf = state.two_factor
  if (f.challenge_id !== undefined && (tf.used_challenges ?? []).includes(f.challenge_id))
    throw new DomainError('unauthorized', `${f.operation}.invalid_token`, 'this sign-in challenge was used already; sign in again')
  const spent = f.challenge_id !== undefined ? { challenge_id: f.challenge_id } : {}
  if (f.time_step !== null && f.for_secret === tf.secret && f.time_step > tf.last_step) {
    return [{ type: 'TwoFactorCodeAccepted', data: { user_uuid: state.user_uuid, time_step: f.time_step, ...spent, accepted_at: f.now } }]
  }
  if (f.time_step === null && tf.backup_code_hashes.some(h => sameHash(h, f.backup_code_hash))) {
    return [{ type: 'BackupCodeUsed', data: { user_uuid: state.user_uuid, code_hash: f.backup_code_hash, ...spent, used_at: f.now } }]
  }
  return [{ type: 'TwoFactorFailed', data: { user_uuid: state.user_uuid, failed_at: f.now } }]
}

/** Whether a decision refused a second factor (the handler then reports `invalid_code`). */
export const refusedSecondFactor = (events: readonly UserEvent[]): boolean => events.some(e => e.type === 'TwoFactorFailed')

/**
 * A credential change of an account with two-factor on needs a second factor too (ASVS
 * 5.0 V7.5.1: re-authentication with every factor the account has): none → refused; the
 * factor's events otherwise (a refused one ends the decision there: the handler reports
 * `<operation>.invalid_code`). An account without two-factor needs nothing more.
 * @returns the factor's events and whether the change may go on.
 * @throws DomainError invalid `<operation>.second_factor_required`; locked `<operation>.locked`.
 */
export function withSecondFactor(
  state: Account,
  factor: SecondFactor | null | undefined,
  operation: string,
  now: string
): { events: UserEvent[]; ok: boolean } {
  if (state.two_factor.status !== 'active') return { events: [], ok: true }
  if (!factor)
    throw new DomainError(
      'invalid',
      `${operation}.second_factor_required`,
      'two-factor authentication is on: send a code from the authenticator app, or a backup code, as `code`'
    )
  const events = secondFactor(state, { ...factor, operation, now })
  return { events, ok: !refusedSecondFactor(events) }
}
