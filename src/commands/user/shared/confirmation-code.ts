import { hmacHex } from '../../../lib/crypto/hashing.ts'
import type { CommandContext } from '../../context.ts'

/** Lifetime of a confirmation code, seconds. */
export const CONFIRMATION_CODE_TTL_S = 30 * 60

/** HMAC of a confirmation code bound to its account, so a hash cannot be brute-forced offline. */
export function confirmationCodeHash(ctx: CommandContext, userUuid: string, code: string): string {
  return hmacHex(ctx.secrets.code_key, `confirm:${userUuid}:${code}`)
}
