import type { Flow, FlowTrigger } from '../../eventsourcing/flow.ts'
import * as claim from '../../domain/claim/decider.ts'
import type { CommandContext } from '../../commands/context.ts'
import { handle, load } from '../../eventsourcing/command-handler.ts'
import { emailClaimStream } from '../../commands/user/shared/email-claims.ts'
import { users } from '../../commands/user/aggregate.ts'
import { react, type PreviousClaim, type ReleaseCommand } from './react.ts'

/** The previous address of the change, unsealed (null: absent in an older event, or the account's key destroyed). */
async function previousOf(ctx: CommandContext, trigger: FlowTrigger): Promise<string | null> {
  const sealed = trigger.data.previous_email
  return typeof sealed === 'string' ? await ctx.sealer.unseal(String(trigger.data.user_uuid), sealed) : null
}

/**
 * An email change releases the previous address from its committed event (the release followed the change inline, and a crash between kept the old address
 * claimed for good — the link, spent by the change, could not finish it). Trigger:
 * EmailChanged. Step `release`: ReleaseValue on the previous address's claim stream, which
 * only its owner can release (idempotent). Bound: a minute. State read: that claim stream
 * and the account (its address now).
 */
export const emailChangeFlow: Flow<CommandContext, PreviousClaim, ReleaseCommand> = {
  name: 'email-change',
  prefix: 'email',
  triggers: ['EmailChanged'],
  steps: ['release'],
  bound_ms: 60_000,
  load: async (ctx, trigger) => {
    const owner = String(trigger.data.user_uuid)
    const previous = await previousOf(ctx, trigger)
    if (previous === null) return { held: false }
    const [{ state: account }, { state: held }] = await Promise.all([users.load(ctx, owner), load(ctx, emailClaimStream(ctx, previous), claim)])
    const now = account.status === 'none' ? null : await ctx.sealer.unseal(owner, account.email)
    const same = now !== null && now.trim().toLowerCase() === previous.trim().toLowerCase()
    return { held: held.owner_uuid === owner && !same }
  },
  react,
  execute: async (ctx, step, meta) => {
    const c = step.command
    const previous = await ctx.sealer.unseal(c.user_uuid, c.previous_email)
    if (previous === null) return
    await handle(
      ctx,
      emailClaimStream(ctx, previous),
      claim,
      { type: 'ReleaseValue', data: { owner_uuid: c.user_uuid, now: ctx.now().toISOString() } },
      { actor: meta.actor, causation_id: meta.causation_id, correlation_id: meta.correlation_id }
    )
  }
}
