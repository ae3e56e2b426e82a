import type { CommandContext } from '../commands/context.ts'
import type { NewEvent } from '../ports/event-store.ts'
import { type Flow, runReaction } from '../eventsourcing/flow.ts'
import { faultPoint } from '../lib/faults.ts'

/**
 * Runs `flow`'s reaction at once to the trigger a command just appended (the first of
 * `r.recorded` whose type starts the flow; `r` a command's result), so that the operation's answer shows the
 * flow's effects; the flow worker runs it again from the committed event, so a crash in
 * between loses nothing. Fault points: `<prefix>.after_<step>` after each step.
 * @returns how many steps it took (0 when `r` carries no trigger: nothing was appended).
 * @throws what a step's command throws (the flow worker finishes it then).
 */
export async function reactNow<S, C>(
  ctx: CommandContext,
  flow: Flow<CommandContext, S, C>,
  r: { recorded: readonly NewEvent[]; position: number }
): Promise<number> {
  const trigger = r.recorded.find(e => flow.triggers.includes(e.type))
  if (trigger?.id === undefined) return 0
  return await runReaction(ctx, flow, { ...trigger, id: trigger.id, position: r.position }, label => {
    faultPoint(ctx.config.fault_point, `${flow.prefix}.after_${label}`)
  })
}
