// A receiver that limits our client's rate of recipients, as Postfix's anvil does
// (`smtpd_client_recipient_rate_limit`: past the limit in its time unit, each RCPT is answered
// `450 4.7.1 Error: too many recipients from [ip]`). Such a reply is push-back, not a full
// envelope: the recipients go back to the queue uncharged, the session ends, the MX is paused,
// and they are asked again within the deadline, never at once. The oracle: the world's own
// record of which RCPT it refused when, and the truth of each address.
// This file owns 127.0.24.0/24.
import t from 'tap'
import { startMailWorld } from '../support/mail-world.ts'
import { connectionsTo, engineFor } from '../support/mail-world-engine.ts'
import { DEFAULT_POLITENESS } from '../../src/verifier/politeness.ts'
import { CHECK_NAMES } from '../../src/domain/checks.ts'

/** The receiver's rate limit: this many recipients a window of WINDOW_MS, per client. */
const LIMIT = 4
const WINDOW_MS = 600
/** Each refused RCPT, with the window it fell in. */
const refusals: Array<{ address: string; window: number; at: number }> = []
const asked: Array<{ address: string; at: number }> = []
let windowStart = 0
let inWindow = 0
const world = await startMailWorld({
  dns_ip: '127.0.24.1',
  domains: [
    { name: 'anvil-rate.com', mx: [{ preference: 10, exchange: 'mx.anvil-rate.com' }] },
    { name: 'slow-quit.com', mx: [{ preference: 10, exchange: 'mx.slow-quit.com' }] },
    { name: 'error-limits.com', mx: [{ preference: 10, exchange: 'mx.error-limits.com' }] },
    // Eight hosted domains, each with an MX name of its own, all on one server (127.0.24.5).
    ...Array.from({ length: 8 }, (_, i) => ({ name: `hosted${i}.com`, mx: [{ preference: 10, exchange: `mail.hosted${i}.com` }] }))
  ],
  records: Array.from({ length: 8 }, (_, i) => ({ name: `mail.hosted${i}.com`, type: 'A' as const, data: '127.0.24.5' })),
  hosts: [
    // The shared server: its own name, and the eight MX names above point here too; it counts every session of ours.
    {
      name: 'shared.hosting-server.com',
      ip: '127.0.24.5',
      rcpt_delay_ms: 20,
      rcpt: a => (/^ok/.test(a) ? { code: 250, message: '2.1.5 Ok' } : { code: 550, message: '5.1.1 User unknown' })
    },
    // Postfix's defaults: slower replies past 10 errors in a session, cut at 20.
    {
      name: 'mx.error-limits.com',
      ip: '127.0.24.4',
      error_limits: { soft: 10, hard: 20, sleep_ms: 200 },
      rcpt: a => (/^ok/.test(a) ? { code: 250, message: '2.1.5 Ok' } : { code: 550, message: '5.1.1 User unknown' })
    },
    // One session at a time, and a QUIT answered 400 ms late (a Postfix sleeping off its errors): the slot is held until then.
    {
      name: 'mx.slow-quit.com',
      ip: '127.0.24.3',
      max_sessions: 1,
      quit_delay_ms: 400,
      rcpt: a => (/^ok/.test(a) ? { code: 250, message: '2.1.5 Ok' } : { code: 550, message: '5.1.1 User unknown' })
    },
    {
      name: 'mx.anvil-rate.com',
      ip: '127.0.24.2',
      enhanced_status_codes: true,
      rcpt: address => {
        const now = Date.now()
        asked.push({ address, at: now })
        if (now - windowStart >= WINDOW_MS) {
          windowStart = now
          inWindow = 0
        }
        if (++inWindow > LIMIT) {
          refusals.push({ address, window: windowStart, at: now })
          return { code: 450, message: '4.7.1 Error: too many recipients from [127.0.0.1]' }
        }
        return /^ok/.test(address) ? { code: 250, message: '2.1.5 Ok' } : { code: 550, message: '5.1.1 <x>: Recipient address rejected: User unknown' }
      }
    }
  ]
})
t.teardown(() => world.close())

t.test('a recipient rate limit (450 4.7.1 too many recipients from us): backed off, asked again later, every answer firm', async t => {
  const { engine } = engineFor(world, {
    engine: {
      pushback_deadline_ms: 30_000,
      // Paused one of the receiver's windows after a refusal (production: Postfix's default anvil window, 60 s, and a second).
      politeness: {
        ...DEFAULT_POLITENESS,
        max_sessions_per_host: 3,
        sessions_per_second_per_host: 1_000,
        burst_per_host: 10,
        rate_window_ms: WINDOW_MS + 100
      }
    }
  })
  const emails = Array.from({ length: 14 }, (_, i) => (i % 3 === 2 ? `nobody${i}@anvil-rate.com` : `ok${i}@anvil-rate.com`))
  const results = await engine.verifyMany(emails.map(email => ({ email, checks: [...CHECK_NAMES] })))
  t.ok(refusals.length > 0, `positive control: the receiver refused ${refusals.length} RCPTs for its rate limit`)
  t.same(
    results.map(r => r.reason),
    emails.map(e => (e.startsWith('ok') ? 'accepted_email' : 'mailbox_not_found')),
    'every address got its firm answer, none left unknown'
  )
  // What was sent before the first refusal came back cannot be recalled (a pipelined window,
  // the other sessions' windows): those refusals come together. None comes later in the same
  // window of the receiver: the client stopped asking once it was told.
  const spans = new Map<number, { first: number; last: number; n: number }>()
  for (const r of refusals) {
    const s = spans.get(r.window) ?? { first: r.at, last: r.at, n: 0 }
    spans.set(r.window, { first: Math.min(s.first, r.at), last: Math.max(s.last, r.at), n: s.n + 1 })
  }
  t.ok(
    [...spans.values()].every(s => s.last - s.first <= 100),
    `in each of the receiver's windows, its refusals came in one burst of what was already sent (${[...spans.values()].map(s => `${s.n} in ${s.last - s.first} ms`).join('; ')})`
  )
  for (const r of refusals) {
    const refusedAt = asked.find(a => a.address === r.address && a.at >= r.window)!.at
    const again = asked.find(a => a.address === r.address && a.at > refusedAt)
    if (again && again.at - refusedAt < WINDOW_MS) t.fail(`${r.address} asked again ${again.at - refusedAt} ms after its refusal`)
  }
})

t.test('the slot is given back once the receiver answered QUIT (or closed), not before: no session over its limit of 1', async t => {
  // One session at a time on this side too: what is tested is when a slot comes back, not how concurrency adapts.
  const { engine } = engineFor(world, {
    probe: { rcpt_per_session: 3 },
    engine: { politeness: { ...DEFAULT_POLITENESS, max_sessions_per_host: 1, sessions_per_second_per_host: 1_000, burst_per_host: 10 } }
  })
  const emails = Array.from({ length: 9 }, (_, i) => `ok${i}@slow-quit.com`)
  const results = await engine.verifyMany(emails.map(email => ({ email, checks: [...CHECK_NAMES] })))
  t.ok(
    results.every(r => r.reason === 'accepted_email'),
    results.map(r => r.reason).join(',')
  )
  const conns = connectionsTo(world, '127.0.24.3')
  t.ok(
    conns.filter(c => c.commands.some(l => /^RCPT/i.test(l))).length >= 3,
    `positive control: ${conns.length} sessions, one after another, three recipients each`
  )
  const turnedAway = conns.filter(c => !c.commands.some(l => /^(EHLO|HELO)/i.test(l)))
  t.equal(turnedAway.length, 0, 'none opened while the last one still held the slot (421 at the banner)')
})

t.test("a session ends before the receiver's error limits: no slowed replies, no session cut, every answer firm", async t => {
  const { engine } = engineFor(world)
  const emails = Array.from({ length: 36 }, (_, i) => (i % 3 === 0 ? `ok${i}@error-limits.com` : `nobody${i}@error-limits.com`))
  const results = await engine.verifyMany(emails.map(email => ({ email, checks: [...CHECK_NAMES] })))
  t.same(
    results.map(r => r.reason),
    emails.map(e => (e.startsWith('ok') ? 'accepted_email' : 'mailbox_not_found')),
    'each as the server answered'
  )
  const conns = connectionsTo(world, '127.0.24.4')
  const errors = conns.map(c => c.errors ?? 0)
  t.ok(
    errors.reduce((a, b) => a + b, 0) >= 24,
    `positive control: the server counted ${errors.reduce((a, b) => a + b, 0)} errors (24 unknown users and the catch-all probe)`
  )
  t.ok(
    errors.every(n => n <= 10),
    `no session past the soft limit of 10 (errors per session: ${errors.join(', ')})`
  )
  t.equal(conns.filter(c => c.cut_for_errors).length, 0, 'none cut for too many errors')
})

t.test('eight MX names on one server: sessions counted by the address behind them, never more than its limit at once', async t => {
  const { engine } = engineFor(world)
  const emails = Array.from({ length: 8 }, (_, d) => Array.from({ length: 12 }, (_, i) => `ok${i}@hosted${d}.com`)).flat()
  const results = await engine.verifyMany(emails.map(email => ({ email, checks: [...CHECK_NAMES] })))
  t.ok(
    results.every(r => r.reason === 'accepted_email'),
    'every address answered'
  )
  const peak = world.peak_sessions.get('127.0.24.5') ?? 0
  t.ok(peak >= 2, `positive control: sessions ran side by side there (peak ${peak})`)
  t.ok(
    peak <= (DEFAULT_POLITENESS.max_sessions_per_ip ?? 6),
    `at most ${DEFAULT_POLITENESS.max_sessions_per_ip} at once (peak ${peak}), where 8 names × 3 a name would allow 24`
  )
})
