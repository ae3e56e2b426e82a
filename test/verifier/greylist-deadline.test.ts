// The greylisting deadline is where asking ends: a receiver that greylists for longer than
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
const answeredAt: number[] = []
const world = await startMailWorld({
  dns_ip: '127.0.26.1',
  domains: [{ name: 'grey-always.com', mx: [{ preference: 10, exchange: 'mx.grey-always.com' }] }],
  hosts: [
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
