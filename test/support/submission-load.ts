// Clients submitting test-key jobs without pause, each request with an Idempotency-Key of
// its own (its address derived from the key: the same key always carries the same body), as
// the outage and failover tests load the service while its database goes away.
import { randomUUID } from 'node:crypto'
import type { Api } from './service.ts'

/** One answer to a submission: its status, problem code and Retry-After, and when it came (epoch ms). */
interface SubmissionAnswer {
  status: number
  code: string | null
  retry_after: string | null
  at: number
}

export interface SubmissionLoad {
  /** Every key sent, in order. */
  keys: string[]
  /** Every answer, in order. */
  answers: SubmissionAnswer[]
  /** Keys answered 202 or 200, with their job and when. */
  acknowledged: Map<string, { uuid: string; at: number }>
  /** Keys whose last answer was neither 202 nor 200. */
  refused: Set<string>
  /** Sends `key`'s submission (again). @returns the status. */
  submit(key: string): Promise<number>
  /** Stops the clients; resolves once each has its last answer. */
  stop(): Promise<void>
}

/**
 * Starts `clients` loops POSTing `/api/verify` with `apiKey`, each a new Idempotency-Key; a
 * refused one (503) waits 50 ms (not the 5 s asked: the tests want many answers while the
 * database is down) before the next.
 */
export function startSubmissionLoad(api: Api, apiKey: string, clients: number): SubmissionLoad {
  const load: Omit<SubmissionLoad, 'stop'> = {
    keys: [],
    answers: [],
    acknowledged: new Map(),
    refused: new Set(),
    submit: async key => {
      const r = await api('POST', '/api/verify', { token: apiKey, headers: { 'idempotency-key': key }, body: { email: `user-${key}@example.com` } })
      const at = Date.now()
      load.answers.push({ status: r.status, code: r.body?.code ?? null, retry_after: r.headers.get('retry-after'), at })
      if (r.status === 202 || r.status === 200) {
        load.acknowledged.set(key, { uuid: r.body.uuid, at })
        load.refused.delete(key)
      } else load.refused.add(key)
      return r.status
    }
  }
  let running = true
  const loops = Array.from({ length: clients }, async () => {
    while (running) {
      const key = randomUUID()
      load.keys.push(key)
      if ((await load.submit(key)) === 503) await new Promise(resolve => setTimeout(resolve, 50))
    }
  })
  return {
    ...load,
    stop: async () => {
      running = false
      await Promise.all(loops)
    }
  }
}
