import pRetry, { AbortError } from 'p-retry'

/** A failure said in a sentence (exit 1, no stack trace). `code` is the API's problem code when there is one. */
export class ListError extends Error {
  readonly code: string | null
  readonly status: number | null
  constructor(message: string, code: string | null = null, status: number | null = null) {
    super(message)
    this.name = 'ListError'
    this.code = code
    this.status = status
  }
}

/**
 * One API call: its data, or a ListError that says what went wrong in a sentence (a 401 as
 * a refused key, a network error as an unreachable service). Retried (p-retry, backing off)
 * when `retryOn` says so — by default on 429 (after its Retry-After), 5xx and network
 * errors; a creation, which must not happen twice, passes its own.
 */
export async function call<T>(
  what: string,
  api_url: string,
  attempt: () => Promise<{ data?: T; error?: unknown; response: Response }>,
  options: { retryOn?: (status: number | null) => boolean; signal?: AbortSignal } = {}
): Promise<T> {
  const retryOn = options.retryOn ?? (status => status === null || status === 429 || status >= 500)
  return await pRetry(
    async () => {
      let r: { data?: T; error?: unknown; response: Response }
      try {
        r = await attempt()
      } catch (err) {
        if ((err as Error).name === 'AbortError') throw new AbortError(new ListError('stopped (interrupted): run again with --resume to go on'))
        const cause = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message
        const error = new ListError(`cannot reach the service at ${api_url} (${cause})`)
        throw retryOn(null) ? error : new AbortError(error)
      }
      if (r.response.ok && r.data !== undefined) return r.data
      const problem = (r.error ?? {}) as { code?: string; detail?: string; title?: string }
      const status = r.response.status
      const said =
        status === 401
          ? 'the API key was refused (unknown, revoked or mistyped: check --api-key or SVC_API_KEY)'
          : `${problem.detail ?? problem.title ?? r.response.statusText}`
      const error = new ListError(`${what}: ${said}`, problem.code ?? null, status)
      if (!retryOn(status)) throw new AbortError(error)
      const after = Number(r.response.headers.get('retry-after'))
      if (status === 429 && Number.isFinite(after) && after > 0) await new Promise(resolve => setTimeout(resolve, Math.min(after, 60) * 1000))
      throw error
    },
    { retries: 6, minTimeout: 250, maxTimeout: 10_000, ...(options.signal && { signal: options.signal }) }
  )
}
