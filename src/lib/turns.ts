import { setImmediate as immediate } from 'node:timers/promises'

/**
 * Turns of the event loop for long work on its thread: a loop over a plan's largest chunk (50,000 addresses: parsing, sealing,
 * simulating, folding) calls `turnIfDue()` as it goes, and gives the loop a turn — every
 * timer and socket that is ready runs (a `setImmediate`: the poll phase comes first) —
 * once `TURN_MS` have passed since the last turn. A clock read otherwise, so it can be
 * called per item.
 *
 * The turn is one for the whole process: loops that are due together wait for the same
 * `setImmediate` and go on when it fires, the first for `TURN_MS`, the others for one
 * item each before they find the next turn due. Were each to take a turn of its own, the
 * check phase would run them back to back (Node runs every queued immediate in one go),
 * twenty loops holding the thread for twenty times `TURN_MS`.
 */

/** Milliseconds of work on the loop's thread between two turns. */
const TURN_MS = 10

let last = performance.now()
let pending: Promise<void> | null = null

/**
 * The turn to wait for when one is due (`TURN_MS` passed since the last), shared by
 * every caller; undefined otherwise (no microtask: `const t = turnIfDue(); if (t) await t`
 * in the hottest loops).
 */
export function turnIfDue(): Promise<void> | undefined {
  if (performance.now() - last < TURN_MS) return undefined
  pending ??= immediate().then(() => {
    pending = null
    last = performance.now()
  })
  return pending
}
