import { hmacHex } from '../../lib/crypto/hashing.ts'
import type { CommandContext } from '../context.ts'

/** Stream of an account's `Idempotency-Key` for one operation (a blind index: the key is never stored). */
export function idempotencyKeyStream(ctx: CommandContext, owner: string, operation: string, key: string): string {
  return `idempotency_key-${hmacHex(ctx.secrets.index_key, `${owner}\n${operation}\n${key}`)}`
}
