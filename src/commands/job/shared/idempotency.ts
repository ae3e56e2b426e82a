import type { Environment } from '../../../domain/shared.ts'
import { hmacHex } from '../../../lib/crypto/hashing.ts'
import type { CommandContext } from '../../context.ts'

/**
 * Stream of an account's `Idempotency-Key` for one operation in one environment (a blind
 * index: the key is never stored). Each environment has its own keys (issue 42 item 10): a
 * key a `svc_test_…` credential claimed never holds up a live request for its 24 hours,
 * nor the reverse. A live key's stream is named as before environments had their own, so
 * claims made before this change still stand.
 */
export function idempotencyKeyStream(ctx: CommandContext, owner: string, environment: Environment, operation: string, key: string): string {
  const scope = environment === 'live' ? `${owner}\n${operation}` : `${owner}\n${environment}\n${operation}`
  return `idempotency_key-${hmacHex(ctx.secrets.index_key, `${scope}\n${key}`)}`
}
