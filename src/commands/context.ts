import { v7 as uuidv7 } from 'uuid'
import type { EventStore, EventMetadata } from '../infra/eventstore/port.ts'
import { WrongExpectedRevisionError } from '../infra/eventstore/port.ts'
import type { ReadStore } from '../infra/readstore/port.ts'
import type { Sealer } from '../infra/crypto/sealer.ts'
import type { Secrets } from '../infra/crypto/secrets.ts'
import type { Config } from '../config.ts'
import type { Event } from '../domain/shared.ts'
import * as user from '../domain/user/decider.ts'
import type { UserEvent } from '../domain/user/events.ts'
import type { VerificationResult } from '../verifier/result.ts'

/** What command handlers need: ports, secrets, configuration, a clock and an id source. */
export interface CommandContext {
  store: EventStore
  reads: ReadStore
  sealer: Sealer
  secrets: Secrets
  config: Config
  now: () => Date
  /** A new UUIDv7 (time-ordered public id). */
  newId: () => string
  /**
   * Checks an address with the verification engine (sign-up screening); absent where
   * the process has no engine, and then sign-up checks syntax and lists only.
   */
  screen?: (email: string) => Promise<VerificationResult>
}

export function defaultClockAndIds (): Pick<CommandContext, 'now' | 'newId'> {
  return { now: () => new Date(), newId: () => uuidv7() }
}

export interface Decider<S, E extends Event<string, unknown>, C> {
  initialState: () => S
  evolve: (state: S, event: E) => S
  decide: (command: C, state: S) => E[]
}

export interface HandleResult<S, E> {
  state: S
  events: E[]
  /** Global position of the last appended event, or of the stream's head when nothing was appended. */
  position: number
  revision: number
}

const MAX_ATTEMPTS = 5

/**
 * Loads a stream, folds it with `evolve`, calls `decide` and appends the new events with
 * the stream's revision as expected revision (ARCHITECTURE.md "Write side"). A concurrent
 * append makes it re-read and decide again, up to 5 times.
 * @throws DomainError from `decide`; WrongExpectedRevisionError after 5 conflicts.
 */
export async function handle<S, E extends Event<string, unknown>, C> (
  ctx: CommandContext, stream: string, decider: Decider<S, E, C>, command: C | ((state: S) => C), meta: Partial<EventMetadata> = {}
): Promise<HandleResult<S, E>> {
  for (let attempt = 1; ; attempt++) {
    const recorded = await ctx.store.readStream(stream)
    let state = decider.initialState()
    for (const r of recorded) state = decider.evolve(state, { type: r.type, data: r.data } as E)
    const cmd = typeof command === 'function' ? (command as (s: S) => C)(state) : command
    const events = decider.decide(cmd, state)
    const last = recorded[recorded.length - 1]
    if (events.length === 0) return { state, events, position: last?.position ?? 0, revision: last?.revision ?? -1 }
    try {
      const metadata: EventMetadata = { occurred_at: ctx.now().toISOString(), actor: meta.actor ?? null, correlation_id: meta.correlation_id ?? null, causation_id: meta.causation_id ?? null }
      const result = await ctx.store.append(stream, events.map(e => ({ id: ctx.newId(), type: e.type, data: e.data as Record<string, unknown>, metadata })), {
        expected_revision: last ? last.revision : 'no_stream'
      })
      for (const e of events) state = decider.evolve(state, e)
      return { state, events, position: result.position, revision: result.next_expected_revision }
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError) || attempt >= MAX_ATTEMPTS) throw err
    }
  }
}

/** Folds a stream into state without deciding anything. */
export async function load<S, E extends Event<string, unknown>> (ctx: CommandContext, stream: string, decider: Pick<Decider<S, E, unknown>, 'initialState' | 'evolve'>): Promise<{ state: S, revision: number, position: number }> {
  const recorded = await ctx.store.readStream(stream)
  let state = decider.initialState()
  for (const r of recorded) state = decider.evolve(state, { type: r.type, data: r.data } as E)
  const last = recorded[recorded.length - 1]
  return { state, revision: last?.revision ?? -1, position: last?.position ?? 0 }
}

/**
 * Appends to `user-<owner>` the events `decide` derives from the folded user state, for
 * flows whose facts (a TOTP check, a password hash) are established before deciding; a
 * concurrent append makes `decide` run again on the new state.
 * @returns the global position of the append (or of the stream's head when nothing was appended).
 */
export async function appendUserEvents (ctx: CommandContext, owner: string, decide: (state: user.UserState) => UserEvent[]): Promise<number> {
  const r = await handle(ctx, `user-${owner}`, { initialState: user.initialState, evolve: user.evolve, decide: (_: null, state: user.UserState) => decide(state) }, null, { actor: owner })
  return r.position
}
