import t from 'tap'
import type { Test } from 'tap'
import { request, Agent } from 'node:http'
import { client, signUp } from '../support/service.ts'
import { startSvc } from '../support/processes.ts'

// No usable timing difference between present and absent accounts (login, forgot-password).
// This file runs alone (package.json: tap `serial` on test/serial): other test files
// sharing the two cores would add more noise than the 0.1 ms it measures.
// Reports medians; compares the two cases with each other (a ratio), never with a fixed
// wall-clock value (the machine's speed varies).
const dataDir = t.testdir()
// The service in a process of its own: work it does after an answer must not share an
// event loop with the client that times the answer.
const { NATS_URL: _nats, ...inherited } = process.env
const service = await startSvc(t, ['serve'], { ...inherited, DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', SIGNUP_SCREENING: 'lists', REGISTRATIONS_PER_HOUR_PER_CLIENT: '10000', REGISTRATIONS_PER_HOUR_PER_DOMAIN: '10000' })
const api = client(service.url)
await signUp(api, dataDir, 'present@example.com', 'correct horse battery staple')

const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }

/**
 * POSTs JSON from the loopback source address `from` (a client of its own for the
 * service's per-client throttles; kept-alive connections, as a real client would) and
 * resolves with the status once the whole answer has arrived.
 */
const agent = new Agent({ keepAlive: true })
t.teardown(() => { agent.destroy() })
const { port } = new URL(service.url)
function post (path: string, body: unknown, from = '127.0.0.1'): Promise<number> {
  const data = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent, localAddress: from, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, res => {
      res.resume()
      res.on('end', () => { resolve(res.statusCode ?? 0) })
    })
    req.on('error', reject)
    req.end(data)
  })
}
/** Times one request (ms) and records its status: a sample is only worth comparing if it did the operation's work. */
async function timed (statuses: number[], fn: () => Promise<number>): Promise<number> {
  const t0 = performance.now()
  statuses.push(await fn())
  return performance.now() - t0
}

t.test('login: wrong password for a present account vs an absent account', async t => {
  const present: number[] = []
  const absent: number[] = []
  const statuses: number[] = []
  // Interleaved, one wrong password each: 4 rounds of 4 pairs, each round from a source
  // address of its own (8 failures, under the per-client throttle of 20) and against a
  // fresh account (4 failures, under the account's lock of 5), so every sample is a 401
  // that paid the password check, never a fast 429.
  for (let round = 0; round < 4; round++) {
    const email = `present${round}@example.com`
    const from = `127.0.0.${10 + round}`
    await signUp(api, dataDir, email, 'correct horse battery staple')
    for (let i = 0; i < 4; i++) {
      present.push(await timed(statuses, () => post('/api/auth/login', { email, password: `wrong ${i}` }, from)))
      absent.push(await timed(statuses, () => post('/api/auth/login', { email: `absent${round}-${i}@example.com`, password: `wrong ${i}` }, from)))
    }
  }
  t.same([...new Set(statuses)], [401], 'every sample was a judged wrong password (401), none throttled')
  const [mp, ma] = [median(present), median(absent)]
  t.comment(`login medians: present ${mp.toFixed(1)} ms, absent ${ma.toFixed(1)} ms`)
  t.ok(Math.max(mp, ma) / Math.min(mp, ma) < 1.5, 'both pay one argon2 verification')
})

// The three "same 204" operations answer after the checks that do not depend on the
// account and do the rest after the answer: their medians for a known and an unknown
// address are compared (interleaved samples, the order alternating; paced by 40 ms, longer
// than the work done after one answer — an argon2 hash of about 12 ms and its events — so
// that it does not fall into the next measurement).
const pace = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))
async function compare (t: Test, name: string, known: (i: number) => Promise<number>, unknown: (i: number) => Promise<number>, rounds = 151, paceMs = 40): Promise<void> {
  const a: number[] = []
  const b: number[] = []
  const statuses: number[] = []
  for (let i = 0; i < rounds; i++) {
    // Which goes first alternates, so that neither case always follows the pause.
    for (const side of i % 2 === 0 ? ['known', 'unknown'] : ['unknown', 'known']) {
      if (side === 'known') a.push(await timed(statuses, () => known(i)))
      else b.push(await timed(statuses, () => unknown(i)))
      await pace(paceMs)
    }
  }
  t.same([...new Set(statuses)], [204], `${name}: every sample answered 204 (none throttled)`)
  const [ma, mb] = [median(a), median(b)]
  // The difference within each pair (known minus unknown, taken a few ms apart): what the
  // machine is doing meanwhile (the service's work after earlier answers, the other core)
  // weighs on both members of a pair alike, so its median shows a systematic difference
  // where the two medians alone drift apart by noise (up to about 0.11 ms in CI).
  const paired = median(a.map((x, i) => x - b[i]))
  t.comment(`${name} medians: known ${ma.toFixed(3)} ms, unknown ${mb.toFixed(3)} ms (${Math.abs(ma - mb).toFixed(3)} ms apart); median difference within pairs ${paired.toFixed(3)} ms`)
  // The goal of the issue "Account security to ASVS level 2": within 0.1 ms.
  t.ok(Math.abs(paired) < 0.1, `${name}: known and unknown within 0.1 ms (median difference within pairs ${paired.toFixed(3)} ms)`)
  t.ok(Math.abs(ma - mb) < 0.25, `${name}: and the medians themselves ${Math.abs(ma - mb).toFixed(3)} ms apart (under 0.25 ms whatever the noise)`)
}

t.test('register, forgot-password, resend-confirmation: known vs unknown address', async t => {
  const password = 'correct horse battery staple'
  await api('POST', '/api/auth/register', { body: { email: 'pending@example.com', password, locale: 'en' } })
  // Register does the most after an unknown address's answer (a hash, two appends, the
  // projections, a mail): paced longer, and more rounds, since its paired median sat at the
  // edge of 0.1 ms by noise alone (−0.09 to +0.08 ms over six runs of 151 rounds, once −0.13).
  await compare(t, 'register', () => post('/api/auth/register', { email: 'present@example.com', password, locale: 'en' }), i => post('/api/auth/register', { email: `newcomer${i}@example.com`, password, locale: 'en' }), 301, 60)
  await compare(t, 'forgot-password', () => post('/api/auth/forgot-password', { email: 'present@example.com' }), i => post('/api/auth/forgot-password', { email: `nobody${i}@example.com` }))
  await compare(t, 'resend-confirmation', () => post('/api/auth/resend-confirmation', { email: 'pending@example.com' }), i => post('/api/auth/resend-confirmation', { email: `nobody${i}@example.com` }))
})
