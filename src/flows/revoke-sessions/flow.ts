import type { Flow } from '../../eventsourcing/flow.ts'
import { projected } from '../../eventsourcing/projected.ts'
import type { CommandContext } from '../../commands/context.ts'
import { revokeSession } from '../../commands/session/revoke-session.ts'
import { sessions } from '../../commands/session/aggregate.ts'
import { openSessions } from '../../projections/sessions.ts'
import { react, type OpenSessions, type RevokeCommand } from './react.ts'

/**
 * A password change or reset, a change of factors, or a ban, ends the account's sessions
 * (issue "Nothing lost": the revocations were made inline after the user's event, and a
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
  load: async (ctx, trigger) => {
    // Every session started before the trigger was committed before it: listed once the read model is past it.
    if (trigger.position !== undefined) await projected(ctx.reads, 'sessions', trigger.position - 1)
    const open: Array<OpenSessions['open'][number]> = []
    for (const s of await openSessions(ctx, String(trigger.data.user_uuid))) {
      // The read model may still list one revoked a moment ago: its stream says.
      if ((await sessions.load(ctx, s.uuid)).state.status === 'active') open.push({ session_uuid: s.uuid, started_at: s.started_at })
    }
    return { open }
  },
  react,
  execute: async (ctx, step, meta) => {
    await revokeSession(ctx, step.command.session_uuid, 'revoked', undefined, undefined, meta.actor ?? undefined)
  }
}
