import { createHmac, timingSafeEqual } from 'node:crypto'

/** Name of the signature header (docs/interface.md §6, "Signature"). */
export const SIGNATURE_HEADER = 'X-Service-Signature'

/**
 * Signs a webhook body (docs/interface.md §6): `t=<timestamp>,v1=<hex>` where `<hex>` is
 * HMAC-SHA256 keyed with the endpoint secret over `<timestamp>.<raw body>`.
 * @param timestamp Unix seconds
 */
export function signatureHeader(secret: string, timestamp: number, rawBody: string): string {
  const hex = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')
  return `t=${timestamp},v1=${hex}`
}

/**
 * What a receiver does with the header (docs/interface.md §6): parse `t` and every `v1`,
 * recompute, compare in constant time, reject when `t` is more than `toleranceS` seconds
 * away from `nowS`. A malformed header is rejected, never thrown.
 * @returns `{ ok: true }` or `{ ok: false, reason }`.
 */
export function verifySignature(
  header: string,
  secret: string,
  rawBody: string,
  nowS: number,
  toleranceS = 300
): { ok: true } | { ok: false; reason: 'malformed' | 'mismatch' | 'outside_tolerance' } {
  let t: number | null = null
  const v1: string[] = []
  for (const part of header.split(',')) {
    const i = part.indexOf('=')
    if (i <= 0) continue
    const key = part.slice(0, i).trim()
    const value = part.slice(i + 1).trim()
    if (key === 't' && /^\d{1,12}$/.test(value)) t = Number(value)
    if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) v1.push(value.toLowerCase())
  }
  if (t === null || v1.length === 0) return { ok: false, reason: 'malformed' }
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${rawBody}`).digest('hex'))
  if (!v1.some(s => timingSafeEqual(Buffer.from(s), expected))) return { ok: false, reason: 'mismatch' }
  if (Math.abs(nowS - t) > toleranceS) return { ok: false, reason: 'outside_tolerance' }
  return { ok: true }
}
