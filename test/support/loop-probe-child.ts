// The child process of test/support/loop-probe.ts: asks `url` every `interval` ms, one
// request at a time over one keep-alive connection, and times each answer from the request
// sent to the last byte read. It tells its parent `{ ready }` once a first answer came, and
// on `'stop'` answers `{ result }` and exits; it exits too when its parent goes away.
import { Agent, request } from 'node:http'

const [url, intervalText, timeoutText, localAddress] = process.argv.slice(2)
const interval = Number(intervalText)
const timeout = Number(timeoutText)
const agent = new Agent({ keepAlive: true, maxSockets: 1, ...(localAddress ? { localAddress } : {}) })

const result = { maxWaitMs: 0, samples: 0, failures: 0, statuses: {} as Record<string, number>, errors: [] as string[] }
let running = true
let announced = false

/** One probe: the milliseconds until the whole answer came and its status, or the error (a timeout counts its full wait). */
async function probe(): Promise<{ ms: number; status: number | null; error: string | null }> {
  const started = performance.now()
  return await new Promise(resolve => {
    const req = request(url, { agent, timeout }, res => {
      res.resume()
      res.once('end', () => resolve({ ms: performance.now() - started, status: res.statusCode ?? 0, error: null }))
      res.once('error', err => resolve({ ms: performance.now() - started, status: null, error: err.message }))
    })
    req.once('timeout', () => req.destroy(new Error(`no answer within ${timeout} ms`)))
    req.once('error', err => resolve({ ms: performance.now() - started, status: null, error: err.message }))
    req.end()
  })
}

process.on('message', message => {
  if (message === 'stop') running = false
})
process.once('disconnect', () => process.exit(0))

while (running) {
  const tick = performance.now()
  const p = await probe()
  result.samples++
  result.maxWaitMs = Math.max(result.maxWaitMs, p.ms)
  if (p.status !== null) result.statuses[p.status] = (result.statuses[p.status] ?? 0) + 1
  if (p.status === null || p.status < 200 || p.status > 299) {
    result.failures++
    if (p.error !== null && result.errors.length < 10) result.errors.push(p.error)
  }
  if (!announced && p.status !== null && p.status >= 200 && p.status <= 299) {
    announced = true
    process.send!({ ready: true })
  }
  const left = interval - (performance.now() - tick)
  if (left > 0) await new Promise(resolve => setTimeout(resolve, left))
}
agent.destroy()
process.send!({ result: { ...result, maxWaitMs: Math.round(result.maxWaitMs) } }, () => process.exit(0))
