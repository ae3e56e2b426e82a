import { fork } from 'node:child_process'

const child = new URL('./loop-probe-child.ts', import.meta.url).pathname

/** What a probe saw between its start and its stop. */
interface LoopProbeResult {
  /** The longest a probe waited for its whole answer (ms, rounded): how long the service's event loop held it, plus the request's own cost. */
  maxWaitMs: number
  /** Probes sent (one every `interval_ms` at most, one at a time). */
  samples: number
  /** Probes that got no answer (a refused or reset connection, a timeout) or an answer outside 2xx. */
  failures: number
  /** Answers by HTTP status. */
  statuses: Record<string, number>
  /** The first ten errors' messages (no answer at all), for the test's diagnostics. */
  errors: string[]
}

export interface LoopProbe {
  /** Ends the probing and resolves with what it saw; the child process has exited by then. */
  stop(): Promise<LoopProbeResult>
}

export interface LoopProbeOptions {
  /** Pause between the starts of two probes (ms; the next starts at once when an answer took longer). Default 25. */
  interval_ms?: number
  /** A probe without its whole answer after this long is a failure, counted with this wait (ms). Default 30,000. */
  timeout_ms?: number
  /** The local address the probe connects from (a per-client limit then counts it apart from the test's other traffic). */
  local_address?: string
  /** How long `startLoopProbe` waits for a first 2xx answer before it gives up (ms). Default 30,000. */
  ready_timeout_ms?: number
}

/**
 * Measures how long a service keeps a cheap request waiting (issue 42's "a separate process
 * probing /healthz every 25 ms that never waits more than 500 ms"): a child process of its
 * own (so the test's own load does not count) asks `url` every 25 ms, one request at a time
 * over one keep-alive connection, and times each answer from the request sent to its last
 * byte. Resolves once a first 2xx answer came (the probe works: a positive control); `stop()`
 * ends it and resolves with the longest wait, the number of probes and the failures.
 *
 * A `/healthz` probe is a public read, counted per client address against
 * `PUBLIC_RATE_LIMIT_PER_MINUTE` (600 by default): at 40 probes a second, a test that probes
 * for more than 15 s raises that limit for its service (or its 429s are failures).
 * The child never keeps the test's process alive and exits when its parent does.
 * @throws Error when no 2xx answer came within `ready_timeout_ms` or the child exited first.
 */
export async function startLoopProbe(url: string, options: LoopProbeOptions = {}): Promise<LoopProbe> {
  const proc = fork(child, [url, String(options.interval_ms ?? 25), String(options.timeout_ms ?? 30_000), options.local_address ?? ''], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  const exited = new Promise<void>(resolve => proc.once('exit', () => resolve()))
  const result = new Promise<LoopProbeResult>((resolve, reject) => {
    proc.on('message', (m: { result?: LoopProbeResult }) => {
      if (m.result) resolve(m.result)
    })
    void exited.then(() => reject(new Error(`the loop probe of ${url} exited without a result`)))
  })
  result.catch(() => {})
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill()
      reject(new Error(`the loop probe got no 2xx answer from ${url} within ${options.ready_timeout_ms ?? 30_000} ms`))
    }, options.ready_timeout_ms ?? 30_000)
    proc.on('message', (m: { ready?: boolean }) => {
      if (m.ready) {
        clearTimeout(timer)
        resolve()
      }
    })
    void exited.then(() => {
      clearTimeout(timer)
      reject(new Error(`the loop probe of ${url} exited before its first answer`))
    })
  })
  // Neither the child nor its channel keeps this process alive: a test that ends without stop() is not held.
  proc.unref()
  proc.channel?.unref()
  let stopped: Promise<LoopProbeResult> | null = null
  return {
    stop: () => {
      stopped ??= (async () => {
        proc.channel?.ref()
        proc.send('stop')
        const r = await result
        await exited
        return r
      })()
      return stopped
    }
  }
}
