/**
 * The world a credential and its data live in (docs/interface.md §5.2): `live`, or the
 * `test` sandbox of `svc_test_` keys, which never bills the wallet (issue 42 item 10: a
 * credential reads and changes its own environment's data only).
 */
export type Environment = 'live' | 'test'

/** An event as produced by a decider (the machinery's shape, `lib/event.ts`). */
export type { Event } from '../lib/event.ts'

/**
 * What `evolve` does with an event type it does not know: nothing (the state as it was).
 * The `never` makes the compiler prove every type of the union is handled; at run time a
 * stream written by a newer version may still hold one this version has not heard of.
 */
export function ignoreUnknownEvent<S>(_event: never, state: S): S {
  return state
}

/** What `decide` does with a command type it does not know (the `never` makes the compiler prove none is left): no events. */
export function noEventsForUnknown(_command: never): [] {
  return []
}

/**
 * How a domain error reads to a caller; the HTTP layer maps it to a status
 * (invalid 400, unauthorized 401, payment_required 402, forbidden 403, not_found 404,
 * conflict 409, unprocessable 422, locked 429).
 */
export type ErrorKind = 'invalid' | 'unauthorized' | 'payment_required' | 'forbidden' | 'not_found' | 'conflict' | 'unprocessable' | 'locked'

/**
 * A business rule violation with a machine code in the `<operation>.<reason>` form, and the
 * numbers it was decided on (`facts`: a caller that words its own refusal reads them, never
 * the message).
 */
export class DomainError extends Error {
  readonly code: string
  readonly kind: ErrorKind
  readonly facts: Readonly<Record<string, number>>
  constructor(kind: ErrorKind, code: string, message: string, facts: Readonly<Record<string, number>> = {}) {
    super(message)
    this.name = 'DomainError'
    this.kind = kind
    this.code = code
    this.facts = facts
  }
}

/**
 * Whether instant `a` comes before instant `b`, both RFC 3339 date-times compared as
 * instants, never as text: `2026-11-24T10:00:00+02:00` is before `2026-11-24T09:00:00Z`,
 * and `…T09:00:00Z` is the same instant as `…T09:00:00.000Z` (RFC 3339 §5.6 allows offsets
 * and fractions). A text that is not a date-time is never before nor after anything.
 */
export function isBefore(a: string, b: string): boolean {
  return Date.parse(a) < Date.parse(b)
}

/** Whether instant `a` is `b` or later (see `isBefore`). */
export function isAtOrAfter(a: string, b: string): boolean {
  return Date.parse(a) >= Date.parse(b)
}
