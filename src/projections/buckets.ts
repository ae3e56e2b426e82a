import { DateTime, IANAZone } from 'luxon'

/**
 * Time buckets of the statistics and balance-history reads (docs/interface.md §8): whole
 * buckets of `hour`, `day`, `week` (ISO, from Monday) or `month`, ending with the current
 * open one, in a time zone (IANA, default UTC) so that a day is a local day, 23 or 25
 * hours long across a daylight-saving change. Projections keep 15-minute slots (UTC):
 * every zone's offset is a multiple of 15 minutes, so every local bucket is a whole
 * number of slots.
 */
export const GRANULARITIES = ['hour', 'day', 'week', 'month'] as const
export type Granularity = (typeof GRANULARITIES)[number]

/** Length of a slot, ms. */
export const SLOT_MS = 15 * 60_000

const CANONICAL = /^\d{4}-\d\d-\d\dT\d\d:(\d\d):\d\d\.\d{3}Z$/

/** The start of the 15-minute slot (UTC) of an instant, as RFC 3339 (`toISOString`'s form). */
export function slotOf(iso: string): string {
  // The form events carry (`toISOString`): the slot by the minutes' digits.
  const m = CANONICAL.exec(iso)
  if (m !== null) {
    const minute = Math.floor(Number(m[1]) / 15) * 15
    return `${iso.slice(0, 14)}${minute < 10 ? '0' : ''}${minute}:00.000Z`
  }
  const ms = Date.parse(iso)
  return new Date(ms - (((ms % SLOT_MS) + SLOT_MS) % SLOT_MS)).toISOString()
}

/** Lengths of an hour and of a day (UTC has no leap seconds in RFC 3339 time as JavaScript counts it), ms. */
export const HOUR_MS = 3_600_000
export const DAY_MS = 86_400_000

/** The start of the UTC hour of an instant, as RFC 3339 (`toISOString`'s form). */
export function hourOf(iso: string): string {
  return unitOf(iso, HOUR_MS, 14, '00:00.000Z')
}

/** The start of the UTC day of an instant, as RFC 3339 (`toISOString`'s form). */
export function dayOf(iso: string): string {
  return unitOf(iso, DAY_MS, 11, '00:00:00.000Z')
}

/** The start of the `unit` an instant falls in: by its slot's digits in the canonical form, else by arithmetic. */
function unitOf(iso: string, unit: number, keep: number, rest: string): string {
  const slot = slotOf(iso)
  if (slot.length === 24) return `${slot.slice(0, keep)}${rest}`
  const ms = Date.parse(slot)
  return new Date(ms - (((ms % unit) + unit) % unit)).toISOString()
}

/** Whether `tz` names a time zone. */
export const isTimeZone = (tz: string): boolean => IANAZone.isValidZone(tz)

/** Days clamped as the interface says: default 28, within 1..364. */
export function clampDays(days: number | undefined): number {
  if (days === undefined) return 28
  return Math.min(364, Math.max(1, Math.trunc(days)))
}

const UNIT_DAYS: Readonly<Record<Granularity, number>> = { hour: 1 / 24, day: 1, week: 7, month: 365.25 / 12 }

/** How many buckets `days` makes at a granularity: 8 at day gives 8, 1 at hour gives 24, 364 at month gives 12 (docs/interface.md §8). */
export function bucketCount(granularity: Granularity, days: number): number {
  return Math.max(1, Math.ceil(days / UNIT_DAYS[granularity] - 1e-9))
}

export interface Bucket {
  /** Start (inclusive) and end (exclusive), RFC 3339 in UTC. */
  start: string
  end: string
}

/**
 * The buckets of a read, oldest first: `bucketCount(granularity, days)` of them, the last
 * the one that contains `now`, each from a local boundary of `tz` to the next.
 * @throws RangeError for an unknown time zone.
 */
export function bucketsOf(now: Date, granularity: Granularity, days: number, tz = 'UTC'): Bucket[] {
  if (!isTimeZone(tz)) throw new RangeError(`unknown time zone ${tz}`)
  const current = DateTime.fromJSDate(now, { zone: tz }).startOf(granularity)
  const n = bucketCount(granularity, days)
  // The n + 1 boundaries, oldest first (k = −1: the end of the current bucket); each bucket ends where the next starts.
  const bounds: string[] = []
  for (let k = n - 1; k >= -1; k--) bounds.push(new Date(current.minus({ [`${granularity}s`]: k }).toMillis()).toISOString())
  return bounds.slice(0, n).map((start, i) => ({ start, end: bounds[i + 1] }))
}
