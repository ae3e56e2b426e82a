import { randomBytes } from 'node:crypto'
import { generateSecret, generateURI, verify as verifyTotp } from 'otplib'
import { DomainError, type ErrorKind } from '../domain/shared.ts'
import * as user from '../domain/user/decider.ts'
import { hmacHex, verifyPassword } from '../infra/crypto/hashing.ts'
import { appendUserEvents as appendUser, load, type CommandContext } from './context.ts'

/** Backup codes handed out when 2FA is set up (single use each). */
export const BACKUP_CODES = 10
/** Accepted clock drift for TOTP codes, seconds either side (one 30 s step). */
const TOTP_TOLERANCE_S = 30

type Active = Extract<user.UserState, { user_uuid: string }>

const backupHash = (ctx: CommandContext, owner: string, code: string): string => hmacHex(ctx.secrets.code_key, `backup:${owner}:${code.replace(/[\s-]/g, '').toLowerCase()}`)

async function account (ctx: CommandContext, owner: string): Promise<Active> {
  const { state } = await load(ctx, `user-${owner}`, user)
  if (state.status === 'none' || state.status === 'deleted') throw new DomainError('not_found', 'user.not_found', 'no such user')
  return state
}

/**
 * POST /api/users/me/2fa/enable: starts setup with a new TOTP secret (sealed in the event)
 * and single-use backup codes (only their HMACs are kept).
 * @throws DomainError conflict `enable_2fa.already_enabled`.
 */
export async function enableTwoFactor (ctx: CommandContext, owner: string): Promise<{ secret: string, otpauth_uri: string, backup_codes: string[] }> {
  const state = await account(ctx, owner)
  if (state.two_factor.status === 'active') throw new DomainError('conflict', 'enable_2fa.already_enabled', 'two-factor authentication is already enabled')
  const secret = generateSecret()
  const codes = Array.from({ length: BACKUP_CODES }, () => randomBytes(5).toString('hex'))
  const sealed = await ctx.sealer.seal(owner, secret)
  const label = (await ctx.sealer.unseal(owner, state.email)) ?? owner
  await appendUser(ctx, owner, () => [{ type: 'TwoFactorSetupStarted', data: { user_uuid: owner, secret: sealed, backup_code_hashes: codes.map(c => backupHash(ctx, owner, c)), started_at: ctx.now().toISOString() } }])
  return { secret, otpauth_uri: generateURI({ issuer: 'Email Verification', label, secret }), backup_codes: codes }
}

async function totpStep (ctx: CommandContext, owner: string, state: Active, code: string): Promise<number | null> {
  if (!/^\d{6}$/.test(code) || !state.two_factor.secret) return null
  const secret = await ctx.sealer.unseal(owner, state.two_factor.secret)
  if (secret === null) return null
  const r = await verifyTotp({ secret, token: code, epochTolerance: TOTP_TOLERANCE_S, epoch: Math.floor(ctx.now().getTime() / 1000) } as Parameters<typeof verifyTotp>[0])
  return r.valid ? (r as unknown as { timeStep: number }).timeStep : null
}

/**
 * POST /api/users/me/2fa/verify-setup: the first TOTP code makes 2FA active.
 * @throws DomainError conflict `verify_2fa_setup.already_enabled`; invalid
 *   `verify_2fa_setup.no_setup`, `verify_2fa_setup.invalid_code`.
 */
export async function verifyTwoFactorSetup (ctx: CommandContext, owner: string, code: string): Promise<void> {
  const state = await account(ctx, owner)
  if (state.two_factor.status === 'active') throw new DomainError('conflict', 'verify_2fa_setup.already_enabled', 'two-factor authentication is already enabled')
  if (state.two_factor.status !== 'setup') throw new DomainError('invalid', 'verify_2fa_setup.no_setup', 'no two-factor setup in progress')
  const step = await totpStep(ctx, owner, state, code)
  if (step === null) throw new DomainError('invalid', 'verify_2fa_setup.invalid_code', 'the code is not valid')
  await appendUser(ctx, owner, () => [{ type: 'TwoFactorEnabled', data: { user_uuid: owner, time_step: step, enabled_at: ctx.now().toISOString() } }])
}

/**
 * Checks a second factor: a TOTP code of a time step after the last accepted one (never
 * the same code twice), or an unused backup code (spent by this). A wrong code is
 * recorded; TWO_FACTOR_FAILURES_BEFORE_LOCK of them lock the step for a while.
 * @throws DomainError `<operation>.invalid_code` of kind `wrongKind`; locked `<operation>.locked`.
 */
export async function checkSecondFactor (ctx: CommandContext, owner: string, code: string, operation: string, wrongKind: ErrorKind): Promise<void> {
  const state = await account(ctx, owner)
  const now = ctx.now().toISOString()
  if (user.twoFactorLocked(state, now)) throw new DomainError('locked', `${operation}.locked`, 'too many wrong codes; try again later')
  const step = await totpStep(ctx, owner, state, code.trim())
  if (step !== null && step > state.two_factor.last_step) {
    await appendUser(ctx, owner, () => [{ type: 'TwoFactorCodeAccepted', data: { user_uuid: owner, time_step: step, accepted_at: now } }])
    return
  }
  const hash = backupHash(ctx, owner, code)
  if (step === null && state.two_factor.backup_code_hashes.includes(hash)) {
    await appendUser(ctx, owner, s => s.status !== 'none' && s.two_factor.backup_code_hashes.includes(hash) ? [{ type: 'BackupCodeUsed', data: { user_uuid: owner, code_hash: hash, used_at: now } }] : [])
    return
  }
  await appendUser(ctx, owner, () => [{ type: 'TwoFactorFailed', data: { user_uuid: owner, failed_at: now } }])
  throw new DomainError(wrongKind, `${operation}.invalid_code`, 'the code is wrong or was already used')
}

/**
 * POST /api/users/me/2fa/disable with the password and a code.
 * @throws DomainError invalid `disable_2fa.not_enabled`, `disable_2fa.wrong_password`,
 *   `disable_2fa.invalid_code`; locked `disable_2fa.locked`.
 */
export async function disableTwoFactor (ctx: CommandContext, owner: string, password: string, code: string): Promise<void> {
  const state = await account(ctx, owner)
  if (state.two_factor.status !== 'active') throw new DomainError('invalid', 'disable_2fa.not_enabled', 'two-factor authentication is not enabled')
  if (!(await verifyPassword(state.password_hash, password))) throw new DomainError('invalid', 'disable_2fa.wrong_password', 'the password is wrong')
  await checkSecondFactor(ctx, owner, code, 'disable_2fa', 'invalid')
  await appendUser(ctx, owner, () => [{ type: 'TwoFactorDisabled', data: { user_uuid: owner, disabled_at: ctx.now().toISOString() } }])
}
