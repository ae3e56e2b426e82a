// The rebuild's Bloom filter of written keys: never a false "absent" (the rebuild would
// lose a document), and false positives near Bloom's rate (oracle: the Set of keys added,
// and (1 − e^(−k·n/m))^k computed here from the filter's size).
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { KeyFilter, K_PROBES } from '../../src/eventsourcing/key-filter.ts'

t.test('every key added is held; keys never added are rarely held, near the theoretical rate', async t => {
  const n = 100_000
  const filter = new KeyFilter(n)
  const added = new Set<string>()
  for (let i = 0; i < n; i++) {
    const key = `${['jobs', 'wallet_groups', 'usage_slots'][i % 3]}\u0000${randomUUID()}`
    added.add(key)
    filter.add(key)
  }
  let missing = 0
  for (const key of added) if (!filter.mayHold(key)) missing++
  t.equal(missing, 0, 'no key added reads as absent')
  let positives = 0
  const trials = 100_000
  for (let i = 0; i < trials; i++) {
    const key = `jobs\u0000${randomUUID()}`
    if (added.has(key)) continue
    if (filter.mayHold(key)) positives++
  }
  const expected = (1 - Math.exp((-K_PROBES * n) / filter.bits)) ** K_PROBES
  t.ok(positives / trials < 2 * expected, `false positives ${((100 * positives) / trials).toFixed(2)}% against ${(100 * expected).toFixed(2)}% in theory`)
  t.ok(positives / trials < 0.05, 'under 5%')
})

t.test('its size: a power of two, about 8 bits a key, from 2^20 to 2^27 bits', async t => {
  t.equal(new KeyFilter(0).bits, 2 ** 20)
  t.equal(new KeyFilter(1_000_000).bits, 2 ** 23, '8,000,000 bits rounded up')
  t.equal(new KeyFilter(4_000_000).bits, 2 ** 25)
  t.equal(new KeyFilter(1e12).bits, 2 ** 27, 'at most 16 MiB')
})

t.test('keys differing in one character, in any script, and the empty key', async t => {
  const filter = new KeyFilter(1_000)
  const keys = ['', 'a', 'b', 'jobs\u0000x', 'jobs\u0000y', 'ключ', 'キー', '🔑', `${'x'.repeat(10_000)}z`]
  for (const k of keys) filter.add(k)
  t.ok(
    keys.every(k => filter.mayHold(k)),
    'all held'
  )
  // An overfull filter (2,000,000 keys in 2^20 bits) holds more keys wrongly, never one wrongly absent.
  const full = new KeyFilter(0)
  for (let i = 0; i < 2_000_000; i++) full.add(String(i))
  let missing = 0
  for (let i = 0; i < 2_000_000; i += 997) if (!full.mayHold(String(i))) missing++
  t.equal(missing, 0, 'still no false negative')
})
