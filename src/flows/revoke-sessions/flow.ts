import type { Flow } from '../../eventsourcing/flow.ts'
import type { CommandContext } from '../../commands/context.ts'
import { revokeSession } from '../../commands/session/revoke-session.ts'
import { activeSessions } from './active-sessions.ts'
import { react, type OpenSessions, type RevokeCommand } from './react.ts'

/**
 * A password change or reset, a change of factors, or a ban, ends the account's sessions
 * (the revocations were made inline after the user's event, and a
 * crash between left the old sessions working). Triggers: PasswordChanged,
 * TwoFactorEnabled, TwoFactorDisabled, UserBanned. Step `revoke`: RevokeSession on
 * `session-<uuid>`, once per session open at the event, idempotent on the session's own
 * stream. Bound: a minute. State read: the `sessions` read model once it has projected the
 * trigger (an account's sessions are many streams), each confirmed active on its stream.
 * Cost: the account's open sessions.
 */
export const revokeSessionsFlow: Flow<CommandContext, OpenSessions, RevokeCommand> = {
  name: 'revoke-sessions',
  prefix: 'sessions',
  triggers: ['PasswordChanged', 'TwoFactorEnabled', 'TwoFactorDisabled', 'UserBanned'],
  steps: ['revoke'],
  bound_ms: 60_000,
  load: async (ctx, trigger) => ({ open: await activeSessions(ctx, String(trigger.data.user_uuid), trigger.position) }),
  react,
  execute: async (ctx, step, meta) => {
    await revokeSession(ctx, step.command.session_uuid, 'revoked', undefined, undefined, meta.actor ?? undefined)
  }
}
