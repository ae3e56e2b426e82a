import type { CheckName } from '../domain/checks.ts'
import type { VerificationEngine, VerifyManyOptions } from '../verifier/engine.ts'
import type { VerificationResult } from '../verifier/result.ts'

interface Waiting {
  email: string
  checks: readonly CheckName[]
  resolve: (r: VerificationResult) => void
  reject: (e: unknown) => void
}

/**
 * Gathers the single verifications that arrive within `max_wait_ms` (or up to
 * `max_items`) into one `verifyMany` call, so that jobs submitted together share DNS
 * lookups and SMTP sessions like a batch does. Each verification is answered as soon as
 * its own result is decided (the engine's `on_result`), not when the slowest route of
 * its call is done: a job is never held by another job's slow server.
 */
export class VerifyBatcher {
  private readonly engine: VerificationEngine
  private readonly maxWaitMs: number
  private readonly maxItems: number
  private readonly options: VerifyManyOptions
  private waiting: Waiting[] = []
  private timer: NodeJS.Timeout | null = null

  constructor(engine: VerificationEngine, options: { max_wait_ms?: number; max_items?: number } & VerifyManyOptions = {}) {
    this.engine = engine
    this.maxWaitMs = options.max_wait_ms ?? 15
    this.maxItems = options.max_items ?? 500
    this.options = { greylist: options.greylist ?? 'defer' }
  }

  async verify(email: string, checks: readonly CheckName[]): Promise<VerificationResult> {
    return await new Promise<VerificationResult>((resolve, reject) => {
      this.waiting.push({ email, checks, resolve, reject })
      if (this.waiting.length >= this.maxItems) this.flush()
      else this.timer ??= setTimeout(() => this.flush(), this.maxWaitMs)
    })
  }

  private flush(): void {
    if (this.timer) {
      clearTimeout(this.timer)
      this.timer = null
    }
    const batch = this.waiting
    this.waiting = []
    if (batch.length === 0) return
    this.engine
      .verifyMany(
        batch.map(w => ({ email: w.email, checks: w.checks })),
        { ...this.options, on_result: (i, r) => batch[i].resolve(r) }
      )
      .then(
        // Every result was given through on_result; a second resolve changes nothing.
        results => {
          batch.forEach((w, i) => {
            w.resolve(results[i])
          })
        },
        err => {
          for (const w of batch) w.reject(err)
        }
      )
  }
}
