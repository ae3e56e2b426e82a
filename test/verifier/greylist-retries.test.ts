// Greylisting retries. 1. A receiver's window is not announced: one recipient per MX is
// asked at retries 1.25× apart, the others once it passes, so that the answers come within
// 1.25× of the window at the cost of one refusal a retry. 2. The deadline is where asking ends: a receiver that greylists for longer than
// the deadline gets no session opened after it, whatever a round costs (here half the
// deadline: 40 refusals, 8 a session, 30 ms each; the first round asks every address
// whatever it costs, the retries end by the deadline). The oracle is the world's own
// record of when each session arrived and each RCPT was answered, against the first
// session's arrival (the engine's deadline counts from before it).
// This file owns 127.0.26.0/24.
import t from 'tap'
import { startMailWorld } from '../support/mail-world.ts'
import { connectionsTo, engineFor } from '../support/mail-world-engine.ts'
import { CHECK_NAMES } from '../../src/domain/checks.ts'

const RCPT_DELAY_MS = 30
const WINDOW_MS = 1_100
const answeredAt: number[] = []
/** The greylisting receiver's record: when it first saw each recipient, and each RCPT it answered (when, and whether it accepted). */
const firstSeen = new Map<string, number>()
const asks: Array<{ address: string; at: number; accepted: boolean }> = []
const world = await startMailWorld({
  dns_ip: '127.0.26.1',
  domains: [
    { name: 'grey-always.com', mx: [{ preference: 10, exchange: 'mx.grey-always.com' }] },
    { name: 'grey-window.com', mx: [{ preference: 10, exchange: 'mx.grey-window.com' }] }
  ],
  hosts: [
    // Greylists each recipient for WINDOW_MS after it first saw it (postgrey's rule, its window shortened).
    {
      name: 'mx.grey-window.com',
      ip: '127.0.26.3',
      enhanced_status_codes: true,
      rcpt: address => {
        const now = Date.now()
        if (!firstSeen.has(address)) firstSeen.set(address, now)
        const accepted = now - firstSeen.get(address)! >= WINDOW_MS
        asks.push({ address, at: now, accepted })
        return accepted ? { code: 250, message: '2.1.5 Ok' } : { code: 450, message: `4.2.0 <${address}>: Recipient address rejected: Greylisted` }
      }
    },
    {
      name: 'mx.grey-always.com',
      ip: '127.0.26.2',
      rcpt_delay_ms: RCPT_DELAY_MS,
      enhanced_status_codes: true,
      rcpt: () => {
        answeredAt.push(Date.now())
        return { code: 450, message: '4.2.0 Greylisted, see http://postgrey.schweikert.ch/help/grey-always.com.html' }
      }
    }
  ]
})
t.teardown(() => world.close())

t.test('a window the receiver does not announce: one recipient asked per retry, all answered within 1.25× of it', async t => {
  const { engine } = engineFor(world, { engine: { greylist: { retry_ms: 300, deadline_ms: 10_000 } } })
  const emails = Array.from({ length: 20 }, (_, i) => `user${i}@grey-window.com`)
  const results = await engine.verifyMany(
    emails.map(email => ({ email, checks: ['syntax', 'dns', 'smtp'] as const })),
    { greylist: 'wait' }
  )
  t.same(new Set(results.map(r => r.reason)), new Set(['accepted_email']), 'every address accepted once its window passed')
  // Retries: every ask of an address after its first.
  const firstAsk = new Map<string, (typeof asks)[number]>()
  for (const a of asks) if (!firstAsk.has(a.address)) firstAsk.set(a.address, a)
  const retries = asks.filter(a => firstAsk.get(a.address) !== a)
  const early = retries.filter(a => !a.accepted)
  t.ok(early.length >= 2, `positive control: ${early.length} retries came before the window passed`)
  t.same(new Set(early.map(a => a.address)).size, 1, 'each of them asked one recipient, the same one (the first seen)')
  t.equal(retries.filter(a => a.accepted).length, emails.length, 'then every recipient, once, accepted')
  const slowest = Math.max(...asks.filter(a => a.accepted).map(a => a.at - firstSeen.get(a.address)!))
  t.ok(slowest <= 1.25 * WINDOW_MS, `each accepted at most ${slowest} ms after the receiver first saw it (window ${WINDOW_MS} ms)`)
})

t.test('greylisted past the deadline: no session after it, every address `greylisted`', async t => {
  const DEADLINE_MS = 2_500
  const { engine } = engineFor(world, { engine: { greylist: { retry_ms: 300, deadline_ms: DEADLINE_MS } } })
  const emails = Array.from({ length: 40 }, (_, i) => `user${i}@grey-always.com`)
  const results = await engine.verifyMany(
    emails.map(email => ({ email, checks: [...CHECK_NAMES] })),
    { greylist: 'wait' }
  )
  t.same(new Set(results.map(r => r.reason)), new Set(['greylisted']), 'every address ends greylisted (unknown)')
  const sessions = connectionsTo(world, '127.0.26.2').map(c => c.at)
  const first = Math.min(...sessions)
  const rounds = sessions.filter(at => at - first > 300).length
  t.ok(rounds > 0, `positive control: ${rounds} sessions of retry rounds`)
  const late = sessions.filter(at => at > first + DEADLINE_MS)
  t.same(late.length, 0, `no session opened after the deadline (${late.map(at => at - first).join(', ')} ms after the first)`)
  // A window already sent when the deadline came is answered after it: at most a window (8 refusals) of replies.
  const after = answeredAt.filter(at => at > first + DEADLINE_MS + RCPT_DELAY_MS)
  t.ok(after.length <= 8, `${after.length} RCPTs answered after the deadline`)
})
