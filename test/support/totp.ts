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
