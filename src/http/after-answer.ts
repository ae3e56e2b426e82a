import type { FastifyBaseLogger } from 'fastify'

/** How long after its answer the work starts (ms). */
const AFTER_MS = 25

/**
 * Work a route does after its answer has gone out (the "same 204" operations: register,
 * forgot-password, resend-confirmation), so that nothing in the answer's timing depends on
 * whether an account exists. Work on the same `key` (an address) runs in the order the
 * requests came, one after the other (a later registration of an address is applied
 * after an earlier one). A failure is logged (the caller was told 204 in every case);
 * `drain` waits for what is still running (the app's close, before the stores close).
 */
export class AfterAnswer {
  private readonly pending = new Set<Promise<void>>()
  private readonly tails = new Map<string, Promise<void>>()

  run(log: FastifyBaseLogger, what: string, key: string, work: () => Promise<void>): void {
    const before = this.tails.get(key) ?? Promise.resolve()
    // A moment after the answer, so that the answer is on its way before the work competes for the CPU.
    const p: Promise<void> = Promise.all([before, new Promise<void>(resolve => setTimeout(resolve, AFTER_MS))])
      .then(work)
      .catch((err: unknown) => {
        log.error({ err }, `${what} failed after its answer`)
      })
      .finally(() => {
        this.pending.delete(p)
        if (this.tails.get(key) === p) this.tails.delete(key)
      })
    this.pending.add(p)
    this.tails.set(key, p)
  }

  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending])
  }
}
