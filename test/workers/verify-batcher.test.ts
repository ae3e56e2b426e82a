import t from 'tap'
import { startMailWorld } from '../support/mail-world.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { VerificationEngine } from '../../src/verifier/engine.ts'
import { CachingMailResolver, DnsClient } from '../../src/verifier/dns.ts'
import { VerifyBatcher } from '../../src/workers/verify-batcher.ts'
import type { VerificationResult } from '../../src/verifier/result.ts'

// The jobs' micro-batcher gathers verifications into one engine call; each must be answered
// when its own result is decided, not when the slowest route of the call is done. The mail
// world holds the RCPT reply for one address until the test releases it, so the oracle is
// an order (which answer came while the other was still held), never a clock. This file
// owns 127.0.109.0/24.
const held = Promise.withResolvers<void>()
const world = await startMailWorld({
  dns_ip: '127.0.109.1',
  domains: [
    { name: 'held-route.com', mx: [{ preference: 10, exchange: 'mx.held-route.com' }] },
    { name: 'prompt-route.com', mx: [{ preference: 10, exchange: 'mx.prompt-route.com' }] },
    { name: 'unanswered-dns.com', mx: [{ preference: 10, exchange: 'mx.prompt-route.com' }] }
  ],
  dns: { faults: { 'unanswered-dns.com': { drop: 'always' } } },
  hosts: [
    { name: 'mx.held-route.com', ip: '127.0.109.2', rcpt_hold: a => (a === 'slow@held-route.com' ? held.promise : undefined) },
    {
      name: 'mx.prompt-route.com',
      ip: '127.0.109.3',
      rcpt: a => (a === 'jane@prompt-route.com' ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 No such user' })
    }
  ]
})
t.teardown(() => {
  held.resolve()
  return world.close()
})
const engine = new VerificationEngine({
  resolver: new CachingMailResolver(new DnsClient({ servers: [world.dns_server], timeout_ms: 1_000 })),
  probe: {
    port: world.smtp_port,
    helo_name: 'verifier.test.example',
    mail_from: 'probe@verifier.test.example',
    timeout_ms: 20_000,
    allow_private_targets: true
  },
  result_cache_ttl_ms: 0
})

t.test("one call, two routes: each answer comes when its own route is done, not held by the other's slow server", async t => {
  // A wait longer than the test's own steps: both requests are in the same engine call.
  const batcher = new VerifyBatcher(engine, { max_wait_ms: 50, max_items: 10 })
  const order: string[] = []
  const track = (label: string, p: Promise<VerificationResult>): Promise<VerificationResult> =>
    p.then(r => {
      order.push(label)
      return r
    })
  const slow = track('slow', batcher.verify('slow@held-route.com', ['syntax', 'dns', 'smtp']))
  const typo = track('invalid syntax', batcher.verify('not an address', ['syntax', 'dns', 'smtp']))
  const prompt = track('prompt', batcher.verify('jane@prompt-route.com', ['syntax', 'dns', 'smtp']))
  await waitUntil(() => world.transcript.includes('127.0.109.2 RCPT TO:<slow@held-route.com>'), 10_000)
  // Fails here (condition not met) when the answers wait for the whole call.
  await waitUntil(() => order.includes('prompt'), 10_000)
  const p = await prompt
  t.equal(p.verdict, 'valid', 'the prompt route answered (positive control)')
  t.equal((await typo).reason, 'invalid_syntax')
  t.same(order, ['invalid syntax', 'prompt'], 'both came while the held address was still in its session')
  held.resolve()
  const s = await slow
  t.equal(s.verdict, 'valid', 'the held address, released, is answered too')
  t.same(order, ['invalid syntax', 'prompt', 'slow'])
})

t.test('what needs no lookup (bad syntax) is answered while a lookup of the same call goes unanswered', async t => {
  const batcher = new VerifyBatcher(engine, { max_wait_ms: 50, max_items: 10 })
  const order: string[] = []
  const lookup = batcher.verify('someone@unanswered-dns.com', ['syntax', 'dns', 'smtp']).then(r => {
    order.push('lookup')
    return r
  })
  const invalid = batcher.verify('not an address', ['syntax', 'dns', 'smtp']).then(r => {
    order.push('invalid syntax')
    return r
  })
  await waitUntil(() => world.dns_queries.some(q => q.name === 'unanswered-dns.com'), 10_000)
  await waitUntil(() => order.includes('invalid syntax'), 10_000)
  t.equal((await invalid).reason, 'invalid_syntax')
  // When the answers wait for the call's lookups, both come together, after the lookup gives up.
  t.same(order, ['invalid syntax'], 'it came while the lookup was still unanswered')
  t.equal((await lookup).verdict, 'unknown', 'the lookup, timed out, ends the other (positive control)')
})
