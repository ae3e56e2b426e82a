import t from 'tap'
import { bucketCount, bucketsOf, clampDays, dayOf, hourOf, slotOf } from '../../src/projections/buckets.ts'

// Oracle: the interface's worked examples (section 8) and the tz database's transitions,
// written out by hand: Europe/Paris moves to CEST at 2026-03-29T01:00Z and back to CET at
// 2026-10-25T01:00Z; America/New_York to EDT at 2026-03-08T07:00Z and to EST at 2026-11-01T06:00Z.

const at = (iso: string): Date => new Date(iso)
const span = (b: { start: string; end: string }): number => (Date.parse(b.end) - Date.parse(b.start)) / 3_600_000

t.test('days are clamped to 1..364 with a default of 28 (docs/interface.md §8)', async t => {
  t.equal(clampDays(undefined), 28)
  t.equal(clampDays(0), 1)
  t.equal(clampDays(1), 1)
  t.equal(clampDays(364), 364)
  t.equal(clampDays(365), 364)
  t.equal(clampDays(2_147_483_647), 364)
})

t.test("bucket counts: the interface's examples and the rest of the table", async t => {
  t.equal(bucketCount('day', 8), 8, '8 at day gives 8')
  t.equal(bucketCount('hour', 1), 24, '1 at hour gives 24')
  t.equal(bucketCount('month', 364), 12, '364 at month gives 12')
  t.equal(bucketCount('hour', 2), 48)
  t.equal(bucketCount('day', 1), 1)
  t.equal(bucketCount('day', 28), 28)
  t.equal(bucketCount('week', 28), 4)
  t.equal(bucketCount('week', 7), 1)
  t.equal(bucketCount('week', 8), 2, 'a part week is a whole bucket')
  t.equal(bucketCount('week', 364), 52)
  t.equal(bucketCount('month', 1), 1)
  t.equal(bucketCount('month', 30), 1)
  t.equal(bucketCount('month', 31), 2)
  t.equal(bucketCount('month', 28), 1)
  for (const [g, days] of [
    ['hour', 3],
    ['day', 8],
    ['week', 28],
    ['month', 364]
  ] as const) {
    t.equal(bucketsOf(at('2026-06-15T12:34:56Z'), g, days).length, bucketCount(g, days), `${g} ${days}: as many buckets as counted`)
  }
})

t.test('UTC: contiguous, oldest first, the last one open around now', async t => {
  const now = at('2026-11-23T10:17:00.000Z')
  const hours = bucketsOf(now, 'hour', 1)
  t.equal(hours[0].start, '2026-11-22T11:00:00.000Z')
  t.same(hours[23], { start: '2026-11-23T10:00:00.000Z', end: '2026-11-23T11:00:00.000Z' })
  for (let i = 1; i < hours.length; i++) t.equal(hours[i].start, hours[i - 1].end)
  t.same(bucketsOf(now, 'day', 2), [
    { start: '2026-11-22T00:00:00.000Z', end: '2026-11-23T00:00:00.000Z' },
    { start: '2026-11-23T00:00:00.000Z', end: '2026-11-24T00:00:00.000Z' }
  ])
  t.same(
    bucketsOf(now, 'week', 14),
    [
      { start: '2026-11-16T00:00:00.000Z', end: '2026-11-23T00:00:00.000Z' },
      { start: '2026-11-23T00:00:00.000Z', end: '2026-11-30T00:00:00.000Z' }
    ],
    'ISO weeks begin on Monday (2026-11-23 is a Monday)'
  )
})

t.test('day, month and year boundaries', async t => {
  t.same(
    bucketsOf(at('2026-12-31T23:59:59.999Z'), 'day', 2).map(b => b.start),
    ['2026-12-30T00:00:00.000Z', '2026-12-31T00:00:00.000Z'],
    'the last millisecond of a year is in its last day'
  )
  t.same(
    bucketsOf(at('2027-01-01T00:00:00.000Z'), 'day', 2),
    [
      { start: '2026-12-31T00:00:00.000Z', end: '2027-01-01T00:00:00.000Z' },
      { start: '2027-01-01T00:00:00.000Z', end: '2027-01-02T00:00:00.000Z' }
    ],
    'the first instant of a year opens its first day'
  )
  t.same(
    bucketsOf(at('2027-01-15T00:00:00Z'), 'month', 62).map(b => [b.start, b.end]),
    [
      ['2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
      ['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
      ['2027-01-01T00:00:00.000Z', '2027-02-01T00:00:00.000Z']
    ],
    'months of 30, 31 and 31 days across a new year'
  )
  const feb = bucketsOf(at('2028-03-01T00:00:00Z'), 'month', 31)
  t.same(feb[0], { start: '2028-02-01T00:00:00.000Z', end: '2028-03-01T00:00:00.000Z' }, 'a leap February')
  t.equal(span(feb[0]), 29 * 24)
  const year = bucketsOf(at('2026-11-23T10:00:00Z'), 'month', 364)
  t.equal(year[0].start, '2025-12-01T00:00:00.000Z')
  t.equal(year[11].end, '2026-12-01T00:00:00.000Z')
  t.same(
    bucketsOf(at('2027-01-03T12:00:00Z'), 'week', 7),
    [{ start: '2026-12-28T00:00:00.000Z', end: '2027-01-04T00:00:00.000Z' }],
    'an ISO week across a new year'
  )
})

t.test('daylight saving: local days of 23 and 25 hours, local weeks and months', async t => {
  const spring = bucketsOf(at('2026-03-30T10:00:00Z'), 'day', 3, 'Europe/Paris')
  t.same(spring, [
    { start: '2026-03-27T23:00:00.000Z', end: '2026-03-28T23:00:00.000Z' },
    { start: '2026-03-28T23:00:00.000Z', end: '2026-03-29T22:00:00.000Z' },
    { start: '2026-03-29T22:00:00.000Z', end: '2026-03-30T22:00:00.000Z' }
  ])
  t.same(spring.map(span), [24, 23, 24], 'Paris: 29 March 2026 is 23 hours long')
  const autumn = bucketsOf(at('2026-10-25T12:00:00Z'), 'day', 2, 'Europe/Paris')
  t.same(autumn, [
    { start: '2026-10-23T22:00:00.000Z', end: '2026-10-24T22:00:00.000Z' },
    { start: '2026-10-24T22:00:00.000Z', end: '2026-10-25T23:00:00.000Z' }
  ])
  t.same(autumn.map(span), [24, 25], 'Paris: 25 October 2026 is 25 hours long')
  const ny = bucketsOf(at('2026-11-01T12:00:00Z'), 'day', 1, 'America/New_York')
  t.same(ny, [{ start: '2026-11-01T04:00:00.000Z', end: '2026-11-02T05:00:00.000Z' }], 'New York: 1 November 2026 is 25 hours long')
  t.same(bucketsOf(at('2026-03-08T12:00:00Z'), 'day', 1, 'America/New_York').map(span), [23], 'New York: 8 March 2026 is 23 hours long')

  const hours = bucketsOf(at('2026-03-29T02:30:00Z'), 'hour', 1, 'Europe/Paris')
  t.equal(hours.length, 24)
  t.ok(
    hours.every(b => span(b) === 1),
    'hours stay one hour long across the change'
  )
  t.same(hours[23], { start: '2026-03-29T02:00:00.000Z', end: '2026-03-29T03:00:00.000Z' })
  t.equal(hours[0].start, '2026-03-28T03:00:00.000Z')
  const fallHours = bucketsOf(at('2026-10-25T01:30:00Z'), 'hour', 1, 'Europe/Paris')
  t.equal(new Set(fallHours.map(b => b.start)).size, 24, 'the repeated local hour gives two distinct buckets')
  t.same(fallHours.slice(-2), [
    { start: '2026-10-25T00:00:00.000Z', end: '2026-10-25T01:00:00.000Z' },
    { start: '2026-10-25T01:00:00.000Z', end: '2026-10-25T02:00:00.000Z' }
  ])

  t.same(
    bucketsOf(at('2026-03-30T10:00:00Z'), 'week', 14, 'Europe/Paris'),
    [
      { start: '2026-03-22T23:00:00.000Z', end: '2026-03-29T22:00:00.000Z' },
      { start: '2026-03-29T22:00:00.000Z', end: '2026-04-05T22:00:00.000Z' }
    ],
    'a local week across the change is 167 hours'
  )
  t.same(
    bucketsOf(at('2026-11-10T12:00:00Z'), 'month', 31, 'America/New_York'),
    [
      { start: '2026-10-01T04:00:00.000Z', end: '2026-11-01T04:00:00.000Z' },
      { start: '2026-11-01T04:00:00.000Z', end: '2026-12-01T05:00:00.000Z' }
    ],
    'New York months begin at local midnight, EDT then EST'
  )
  t.same(
    bucketsOf(at('2027-01-01T03:00:00Z'), 'day', 1, 'America/New_York'),
    [{ start: '2026-12-31T05:00:00.000Z', end: '2027-01-01T05:00:00.000Z' }],
    'still 31 December in New York'
  )
  t.same(
    bucketsOf(at('2026-06-01T00:10:00Z'), 'day', 1, 'Asia/Kathmandu'),
    [{ start: '2026-05-31T18:15:00.000Z', end: '2026-06-01T18:15:00.000Z' }],
    'a +05:45 zone: local days on 15-minute slots'
  )
  t.throws(() => bucketsOf(at('2026-06-01T00:00:00Z'), 'day', 1, 'Mars/Olympus'), RangeError)
})

t.test('slots are the 15-minute UTC grid every bucket boundary lies on', async t => {
  t.equal(slotOf('2026-11-23T10:14:59.999Z'), '2026-11-23T10:00:00.000Z')
  t.equal(slotOf('2026-11-23T10:15:00.000Z'), '2026-11-23T10:15:00.000Z')
  t.equal(slotOf('2026-11-23T12:15:00.000+02:00'), '2026-11-23T10:15:00.000Z')
  t.equal(slotOf('1969-12-31T23:59:00.000Z'), '1969-12-31T23:45:00.000Z', 'before the epoch too')
  for (const tz of ['Europe/Paris', 'America/New_York', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'Pacific/Chatham']) {
    for (const b of bucketsOf(at('2026-10-04T12:00:00Z'), 'day', 364, tz)) {
      if (slotOf(b.start) !== b.start) t.fail(`${tz}: ${b.start} is not on the slot grid`)
    }
  }
  t.pass('every local day boundary of a year in five zones is on the grid')
})

t.test('slotOf: the 15-minute slot of any instant, as Date arithmetic computes it', async t => {
  // The oracle: the instant floored to a multiple of 15 minutes since the epoch, by Date.
  const floor = (ms: number): string => new Date(Math.floor(ms / 900_000) * 900_000).toISOString()
  let wrong = 0
  for (let k = 0; k < 20_000; k++) {
    // Instants over two centuries, either side of slot boundaries too.
    const ms = k % 2 === 0 ? Math.floor(Math.random() * 6.3e12) - 1e12 : Math.floor(Math.random() * 7e6) * 900_000 + (k % 3) - 1
    if (slotOf(new Date(ms).toISOString()) !== floor(ms)) wrong++
  }
  t.equal(wrong, 0, '20,000 instants, canonical form')
  t.equal(slotOf('2026-11-24T09:37:12+01:00'), '2026-11-24T08:30:00.000Z', 'another offset: by Date.parse')
  t.equal(slotOf('2026-03-29T01:59:59.999Z'), '2026-03-29T01:45:00.000Z')
})

t.test('hourOf and dayOf: the UTC hour and day of any instant, as Date arithmetic computes them', async t => {
  const floor = (ms: number, unit: number): string => new Date(Math.floor(ms / unit) * unit).toISOString()
  let wrong = 0
  for (let k = 0; k < 20_000; k++) {
    // Instants over two centuries (before the epoch too), and either side of hour and day boundaries.
    const ms = k % 2 === 0 ? Math.floor(Math.random() * 6.3e12) - 1e12 : Math.floor(Math.random() * 2e6) * 3_600_000 + (k % 3) - 1
    const iso = new Date(ms).toISOString()
    if (hourOf(iso) !== floor(ms, 3_600_000) || dayOf(iso) !== floor(ms, 86_400_000)) wrong++
  }
  t.equal(wrong, 0, '20,000 instants, canonical form')
  t.same(
    [hourOf('2026-11-24T00:37:12+01:00'), dayOf('2026-11-24T00:37:12+01:00')],
    ['2026-11-23T23:00:00.000Z', '2026-11-23T00:00:00.000Z'],
    'another offset: the UTC hour and day'
  )
  t.same(
    [hourOf('+012026-11-24T10:37:12.000Z'), dayOf('+012026-11-24T10:37:12.000Z')],
    ['+012026-11-24T10:00:00.000Z', '+012026-11-24T00:00:00.000Z'],
    'a six-digit year: by arithmetic'
  )
})
