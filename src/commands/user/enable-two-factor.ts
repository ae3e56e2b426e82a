import { randomBytes } from 'node:crypto'
import { generateSecret, generateURI } from 'otplib'
import type { CommandContext } from '../context.ts'
import { account, backupHash } from './shared/second-factor.ts'
import { users } from './aggregate.ts'

/** Backup codes handed out when 2FA is set up (single use each). */
const BACKUP_CODES = 10

/**
 * A backup code: 112 random bits (ASVS 5.0 V6.5.2: a lookup secret kept under a plain
 * keyed hash needs at least 112 bits), as 28 hex digits in groups of 4
 * (`3f9a-0c1e-…`); dashes, spaces and case do not matter when it is typed back.
 */
const backupCode = (): string => randomBytes(14).toString('hex').match(/.{4}/g)!.join('-')

/**
 * POST /api/users/me/2fa/enable: starts setup with a new TOTP secret (sealed in the event)
 * and single-use backup codes (only their HMACs are kept); a setup in progress starts again.
 * @throws DomainError conflict `enable_2fa.already_enabled`; not_found `enable_2fa.not_found`.
 */
export async function enableTwoFactor(ctx: CommandContext, owner: string): Promise<{ secret: string; otpauth_uri: string; backup_codes: string[] }> {
  const state = await account(ctx, owner)
  const secret = generateSecret()
  const codes = Array.from({ length: BACKUP_CODES }, backupCode)
  const sealed = await ctx.sealer.seal(owner, secret)
  const label = (await ctx.sealer.unseal(owner, state.email)) ?? owner
  await users.handle(
    ctx,
    owner,
    {
      type: 'EnableTwoFactor',
      data: { secret_sealed: sealed, backup_code_hashes: codes.map(c => backupHash(ctx, owner, c)), now: ctx.now().toISOString() }
    },
    { actor: owner }
  )
  return { secret, otpauth_uri: generateURI({ issuer: 'Email Verification', label, secret }), backup_codes: codes }
}
