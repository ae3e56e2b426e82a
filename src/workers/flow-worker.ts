import type { Bus, Consumer } from '../ports/bus.ts'
import type { CommandContext } from '../commands/context.ts'
import { runReaction } from '../eventsourcing/flow.ts'
import { faultPoint } from '../lib/faults.ts'
import { FLOWS, FLOW_EVENTS } from '../flows/index.ts'

/**
 * The flow worker: every committed event that starts a flow is
 * delivered here by the bus (the relay publishes from its checkpoint, so an event whose
 * reaction a crash cut short is delivered again), and each flow it starts runs its
 * reaction to the end. The reactions are idempotent: one already carried out inline by the
 * operation that appended the event finds nothing left to do. A reaction that fails is
 * delivered again with back-off. Fault points: `<flow prefix>.after_<step>`.
 */
export async function startFlowWorker(ctx: CommandContext, bus: Bus, options: { concurrency: number }): Promise<Consumer> {
  return await bus.consume({ name: 'flows', event_types: FLOW_EVENTS, concurrency: options.concurrency, max_deliveries: 20 }, async event => {
    for (const flow of FLOWS) {
      if (!flow.triggers.includes(event.type)) continue
      await runReaction(ctx, flow, event, label => {
        faultPoint(ctx.config.fault_point, `${flow.prefix}.after_${label}`)
      })
    }
  })
}
