import type { EventMetadata, RecordedEvent } from '../ports/event-store.ts'

/**
 * The event a reaction answers: as the bus delivers it, or as the operation that appended
 * it holds it (inline). `position`: its global position, or that of the append that carried
 * it (a reaction waiting for a read model to have projected it); absent where unknown.
 */
export type FlowTrigger = Pick<RecordedEvent, 'id' | 'type' | 'data' | 'metadata'> & { position?: number }

/**
 * Flows (docs/design/architecture.md "Operations over several streams"): an
 * operation that changes several streams appends its first fact to one stream, and a
 * reaction carries out the rest from that committed event, at least once, idempotently.
 * A flow is data: the events that start it, what it needs to know, and a pure `react` from
 * the event and that state to the steps left (Emmett's workflows). `runReaction` runs it
 * to its end; the flow worker runs it from the bus (at least once: a crash before the end
 * delivers the event again), the operation's own entry point runs it inline (its answer
 * shows the effects at once).
 */

/** One step of a reaction: a command to carry out, named for its fault point (`<prefix>.after_<label>`). */
export interface FlowStep<C> {
  label: string
  command: C
}

/** What a step's command is appended with: who acts (the flow), and the event that caused it. */
type FlowMeta = Pick<EventMetadata, 'actor' | 'causation_id' | 'correlation_id'>

export interface Flow<Ctx, S, C> {
  /** Its name in metrics, logs and the docs' table (`confirm-account`). */
  name: string
  /** Its fault points' prefix (`confirm`): `<prefix>.after_<label>` after each step. */
  prefix: string
  /** The event types that start it. */
  triggers: readonly string[]
  /** The labels of every step it can take (the crash tests iterate them). */
  steps: readonly string[]
  /** How long after its trigger it is finished when nothing fails (ms): what `svc doctor` and the docs state. */
  bound_ms: number
  /** What `react` needs to know, read now (streams, configuration). */
  load(ctx: Ctx, trigger: FlowTrigger): Promise<S>
  /** The steps left, from the trigger and the state: pure; none once the state shows the work done. */
  react(trigger: FlowTrigger, state: S): ReadonlyArray<FlowStep<C>>
  /** Carries out one step: an idempotent command (its id derived from the trigger). */
  execute(ctx: Ctx, step: FlowStep<C>, meta: FlowMeta): Promise<void>
}

/** Rounds of load, react and execute a reaction may take before it is cut short (a reaction that never ends is a bug). */
const MAX_ROUNDS = 4

/**
 * Runs `flow`'s reaction to `trigger` to its end: loads the state, takes the steps `react`
 * returns, carries them out in order (calling `after(label)` after each: the fault
 * points), and again until `react` returns none. Every step is idempotent, so running it
 * again after a crash — or twice at once, inline and from the bus — changes nothing more.
 * @returns the steps carried out.
 * @throws what a step's command throws (the caller retries: the bus delivers again);
 *   Error when the reaction does not end within MAX_ROUNDS rounds.
 */
export async function runReaction<Ctx, S, C>(
  ctx: Ctx,
  flow: Flow<Ctx, S, C>,
  trigger: FlowTrigger,
  after: (label: string) => void = () => {}
): Promise<number> {
  const meta: FlowMeta = {
    // Who acted is who started it (the account confirming, the operator); the flow when nobody did.
    actor: trigger.metadata.actor ?? `flow:${flow.name}`,
    causation_id: trigger.id,
    correlation_id: trigger.metadata.correlation_id ?? trigger.id
  }
  let done = 0
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const steps = flow.react(trigger, await flow.load(ctx, trigger))
    if (steps.length === 0) return done
    for (const step of steps) {
      await flow.execute(ctx, step, meta)
      done++
      after(step.label)
    }
  }
  throw new Error(`flow ${flow.name}: its reaction to ${trigger.type} ${trigger.id} did not end in ${MAX_ROUNDS} rounds`)
}
