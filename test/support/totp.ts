import { createHmac } from 'node:crypto'

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/** The bytes of an RFC 4648 base32 string (no padding needed). */
function base32Bytes(text: string): Buffer {
  let bits = ''
  for (const c of text.replace(/=+$/, '').toUpperCase()) bits += BASE32.indexOf(c).toString(2).padStart(5, '0')
  return Buffer.from((bits.match(/.{8}/g) ?? []).map(b => parseInt(b, 2)))
}

/**
 * An RFC 6238 TOTP code computed here with node:crypto — the tests' oracle, independent of
 * the library the service checks codes with: HMAC over the 8-byte big-endian step
 * counter, RFC 4226 §5.3 dynamic truncation. Checked against RFC 6238 Appendix B
 * in test/security/headers-and-sessions.test.ts (the RFC's SHA-1 rows; npm run eval takes the whole appendix).
 * @param at Unix time in ms.
 */
export function totp(base32: string, at = Date.now(), options: { digits?: number; step_s?: number; algorithm?: 'sha1' | 'sha256' | 'sha512' } = {}): string {
  const digits = options.digits ?? 6
  const counter = Buffer.alloc(8)
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 1000 / (options.step_s ?? 30))))
  const mac = createHmac(options.algorithm ?? 'sha1', base32Bytes(base32))
    .update(counter)
    .digest()
  const offset = mac[mac.length - 1] & 0xf
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits).padStart(digits, '0')
}

/**
 * The current TOTP code by the real clock, for a request sent at once to a service that
 * accepts a code only in its own 30 s step: when less than 3 s of the step are left, it
 * waits for the next step to begin (at most 3 s), so that the request is not checked in
 * the step after the code's (a slow machine takes more than a moment between the two).
 */
export async function totpNow(base32: string): Promise<string> {
  const left = 30_000 - (Date.now() % 30_000)
  if (left < 3_000) await new Promise(resolve => setTimeout(resolve, left + 50))
  return totp(base32)
}
