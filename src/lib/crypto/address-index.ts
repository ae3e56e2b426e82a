import { createHmac } from 'node:crypto'
import { keyObjectOf } from './hashing.ts'
import { addressKey } from '../address-key.ts'
import type { Secrets } from './secrets.ts'

/**
 * A job address's blind index in its account: 16 hex digits (64 bits) of HMAC-SHA-256 with
 * the service's index key over the account and the address as `addressKey` makes it (trimmed,
 * NFC, lower-cased, its domain in ASCII: RFC 5891), so that `Jane@Bücher.net` and
 * `jane@xn--bcher-kva.net` are one. Equal addresses of one account, equal indexes; nothing
 * about the address otherwise, and nothing across accounts. Kept on JobQueued
 * (`email_index`) for `GET /api/jobs?search=<address>` without unsealing anything.
 * Cost: one HMAC of at most 1 KiB.
 */
export function jobAddressIndex(ctx: { secrets: Pick<Secrets, 'index_key'> }, userUuid: string, email: string): string {
  return createHmac('sha256', keyObjectOf(ctx.secrets.index_key))
    .update(`job\n${userUuid}\n${addressKey(email)}`)
    .digest()
    .toString('hex', 0, 8)
}
