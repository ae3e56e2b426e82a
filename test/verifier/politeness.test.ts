import t from 'tap'
import { Gate, Politeness, DEFAULT_POLITENESS } from '../../src/verifier/politeness.ts'

const settledNow = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false
  void p.then(() => {
    done = true
  })
  await new Promise(resolve => setImmediate(resolve))
  return done
}

t.test('a gate caps concurrent sessions and hands a freed slot to the next waiter', async t => {
  const g = new Gate({ max_concurrent: 2, rate_per_s: Infinity, burst: 10 })
  const a = await g.acquire()
  await g.acquire()
  const third = g.acquire()
  t.equal(await settledNow(third), false, 'the third waits')
  a()
  t.equal(await settledNow(third), true, 'and gets the slot that was freed')
})

t.test('a token bucket paces new sessions beyond the burst', async t => {
  const g = new Gate({ max_concurrent: 100, rate_per_s: 50, burst: 2 })
  await g.acquire()
  await g.acquire()
  const third = g.acquire()
  t.equal(await settledNow(third), false, 'the burst is spent: the next one waits for a token')
  await third
  t.pass('a token came')
})

t.test('push-back halves concurrency and pauses; clean sessions grow it back (AIMD)', async t => {
  const g = new Gate({ max_concurrent: 8, rate_per_s: Infinity, burst: 100, backoff: { initial_ms: 30, max_ms: 100 } })
  t.equal(g.concurrency, 8)
  t.equal(g.pushBack(), 30)
  t.equal(g.concurrency, 4)
  t.equal(g.pushBack(), 60, 'the pause doubles')
  t.equal(g.pushBack(), 100, 'up to the maximum')
  t.equal(g.concurrency, 1)
  const paused = g.acquire()
  t.equal(await settledNow(paused), false, 'no new session during the pause')
  ;(await paused)()
  g.succeeded()
  g.succeeded()
  t.equal(g.concurrency, 3)
})

t.test('provider limits hold across all MX hosts of the provider', async t => {
  const p = new Politeness({ ...DEFAULT_POLITENESS, max_sessions_per_host: 5, providers: { google: { max_sessions: 2, sessions_per_second: 1000 } } })
  await p.acquire('alt1.aspmx.l.google.com', 'google')
  await p.acquire('alt2.aspmx.l.google.com', 'google')
  const third = p.acquire('alt3.aspmx.l.google.com', 'google')
  t.equal(await settledNow(third), false, 'a third google session waits, whatever the host')
  const other = p.acquire('mx.example-corp.com', null)
  t.equal(await settledNow(other), true, 'other receivers are not held up')
  t.equal(p.sessionsFor('alt1.aspmx.l.google.com', 'google'), 2)
})
