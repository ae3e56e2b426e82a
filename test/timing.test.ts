import t from 'tap'
import { client, signUp, startTestService, testConfig } from './support/service.ts'

// No usable timing difference between present and absent accounts (login, forgot-password).
// Reports medians; compares the two cases with each other (a ratio), never with a fixed
// wall-clock value (the machine's speed varies).
const dataDir = t.testdir()
const service = await startTestService(testConfig(dataDir))
t.teardown(() => service.close())
const api = client(service.url)
await signUp(api, dataDir, 'present@example.com', 'correct horse battery staple')

const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
async function timed (fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now()
  await fn()
  return performance.now() - t0
}

t.test('login: wrong password for a present account vs an absent account', async t => {
  const present: number[] = []
  const absent: number[] = []
  // Interleaved, 16 rounds (below the per-client throttle), one wrong password each, so
  // the present account never reaches its lock (5) — a fresh account per 4 rounds.
  for (let round = 0; round < 4; round++) {
    const email = `present${round}@example.com`
    await signUp(api, dataDir, email, 'correct horse battery staple')
    for (let i = 0; i < 4; i++) {
      present.push(await timed(() => api('POST', '/api/auth/login', { body: { email, password: `wrong ${i}` } })))
      absent.push(await timed(() => api('POST', '/api/auth/login', { body: { email: `absent${round}-${i}@example.com`, password: `wrong ${i}` } })))
    }
  }
  const [mp, ma] = [median(present), median(absent)]
  t.comment(`login medians: present ${mp.toFixed(1)} ms, absent ${ma.toFixed(1)} ms`)
  t.ok(Math.max(mp, ma) / Math.min(mp, ma) < 1.5, 'both pay one argon2 verification')
})

t.test('forgot-password: present vs absent account', async t => {
  const present: number[] = []
  const absent: number[] = []
  for (let i = 0; i < 15; i++) {
    present.push(await timed(() => api('POST', '/api/auth/forgot-password', { body: { email: 'present@example.com' } })))
    absent.push(await timed(() => api('POST', '/api/auth/forgot-password', { body: { email: `nobody${i}@example.com` } })))
  }
  const [mp, ma] = [median(present), median(absent)]
  t.comment(`forgot-password medians: present ${mp.toFixed(1)} ms, absent ${ma.toFixed(1)} ms`)
  // Both answer in a few ms (the mail goes out from a worker, not the request): compared
  // relatively, with a small floor for scheduling noise.
  t.ok(Math.max(mp, ma) / Math.min(mp, ma) < 2 || Math.abs(mp - ma) < 3, 'no usable difference')
})
