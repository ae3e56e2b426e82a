import type { EventMetadata } from '../ports/event-store.ts'
import type { Event } from '../lib/event.ts'
import { handle, load, type Decider, type HandleResult, type Loaded, type WriteContext } from './command-handler.ts'

/**
 * An aggregate's command handler, bound to its decider and to how its streams are named
 * (Emmett's `CommandHandler` per aggregate): `wallets.handle(ctx, user, command)` runs a
 * command on the stream `wallet-<user>` (command-handler.ts `handle`: its cost, retries and
 * errors), `wallets.load(ctx, user)` folds that stream.
 */
export interface Aggregate<S, E extends Event<string, unknown>, C> {
  /** `handle` on the stream of `id`. @throws as `handle`: DomainError from the decider, WrongExpectedRevisionError past the deadline. */
  handle(
    ctx: WriteContext,
    id: string,
    command: C | ((state: S) => C),
    meta?: Partial<EventMetadata>,
    options?: { known?: Loaded<S> }
  ): Promise<HandleResult<S, E>>
  /** The stream of `id` folded into state (revision -1: no such stream). */
  load(ctx: WriteContext, id: string): Promise<Loaded<S>>
}

/**
 * The handler of the aggregate whose streams are `<category>-<id>`. Each aggregate is bound
 * once, in `commands/<aggregate>/aggregate.ts` beside its operations (Emmett's per-aggregate
 * folders); docs/operation-map.md lists them with their streams. Streams keyed by a value that must stay
 * unique across accounts (idempotency keys, e-mail claims) are named beside their commands,
 * from a keyed hash of the value.
 */
export function aggregate<S, E extends Event<string, unknown>, C>(category: string, decider: Decider<S, E, C>): Aggregate<S, E, C> {
  const stream = (id: string): string => `${category}-${id}`
  return {
    handle: (ctx, id, command, meta = {}, options = {}) => handle(ctx, stream(id), decider, command, meta, options),
    load: (ctx, id) => load(ctx, stream(id), decider)
  }
}
