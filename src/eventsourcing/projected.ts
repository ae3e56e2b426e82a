import type { ReadStore } from '../ports/read-store.ts'

/** How often a wait looks at the checkpoint again (ms). */
const POLL_MS = 10

/**
 * Waits until `projection`'s checkpoint in the read store reaches `position` (a global
 * position), so that a reaction reading that read model sees every event up to it — also in
 * a process that does not run the projections (the checkpoint is in the shared read store).
 * Cost: one key lookup per POLL_MS, for at most `timeout_ms`.
 * @returns whether it got there in time (the caller reads anyway, and says so, when not).
 */
export async function projected(reads: Pick<ReadStore, 'getCheckpoint'>, projection: string, position: number, timeout_ms = 5_000): Promise<boolean> {
  const until = Date.now() + timeout_ms
  for (;;) {
    if ((await reads.getCheckpoint(projection)) >= position) return true
    if (Date.now() >= until) return false
    await new Promise(resolve => setTimeout(resolve, POLL_MS))
  }
}
