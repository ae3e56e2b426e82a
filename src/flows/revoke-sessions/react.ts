import type { FlowStep, FlowTrigger } from '../../eventsourcing/flow.ts'

/** The account's sessions still active on their own streams when the reaction looked. */
export interface OpenSessions {
  open: ReadonlyArray<{ session_uuid: string; started_at: string }>
}

/** One step per session: its revocation (RevokeSession on `session-<uuid>`, idempotent). */
export type RevokeCommand = { type: 'RevokeSession'; session_uuid: string }

/**
 * PasswordChanged (a change or a reset), TwoFactorEnabled, TwoFactorDisabled or UserBanned
 * → every session of the account that was open at that moment is revoked (ASVS 5.0
 * V7.4.3: a change of password or factors ends the other sessions; a ban ends all), except
 * the one a change was made from (`kept_session_uuid`).
 * Sessions started after the event (a sign-in with the new password, after an unban) are
 * left alone, so a reaction run late — after a crash, from the bus — ends only what the
 * event meant to end. Nothing once none is left.
 */
export function react(trigger: FlowTrigger, state: OpenSessions): ReadonlyArray<FlowStep<RevokeCommand>> {
  const d = trigger.data
  let at: string
  let keep: string | null = null
  if (trigger.type === 'PasswordChanged') {
    at = String(d.changed_at)
    keep = typeof d.kept_session_uuid === 'string' ? d.kept_session_uuid : null
  } else if (trigger.type === 'TwoFactorEnabled' || trigger.type === 'TwoFactorDisabled') {
    at = String(trigger.type === 'TwoFactorEnabled' ? d.enabled_at : d.disabled_at)
    keep = typeof d.kept_session_uuid === 'string' ? d.kept_session_uuid : null
  } else if (trigger.type === 'UserBanned') at = String(d.banned_at)
  else return []
  return state.open
    .filter(s => s.session_uuid !== keep && s.started_at <= at)
    .map(s => ({ label: 'revoke', command: { type: 'RevokeSession', session_uuid: s.session_uuid } }))
}
