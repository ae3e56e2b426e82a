import { DomainError } from '../../domain/shared.ts'
import type { CommandContext } from '../../commands/context.ts'
import { accountOfEmail } from '../../commands/user/read.ts'
import { confirmationCodeHash } from '../../commands/user/shared/confirmation-code.ts'
import { startSession, type ClientSeen, type SignedIn } from '../../commands/session/start-session.ts'
import { users } from '../../commands/user/aggregate.ts'
import { wallets } from '../../commands/wallet/aggregate.ts'
import { faultPoint } from '../../lib/faults.ts'
import { reactNow } from '../react-now.ts'
import { confirmAccountFlow } from './flow.ts'

const invalidCode = (): DomainError =>
  new DomainError('unauthorized', 'confirm_account.invalid_code', 'the code is wrong, expired or used up; ask for a new one')

/**
 * POST /api/auth/confirm: checks the six-digit code (at most MAX_CONFIRMATION_ATTEMPTS
 * wrong tries per code, within its lifetime) and confirms the account (`UserConfirmed`, the
 * flow's first fact); the Free plan's grant follows from it (`confirmAccountFlow`: run here
 * at once, so the answer shows the tokens, and by the flow worker from the committed event,
 * so a crash in between loses nothing); then the user is signed in.
 * Fault points: `confirm.after_confirm`, `confirm.after_grant`.
 * @throws DomainError unauthorized `confirm_account.invalid_code` for any failure, so the
 *   answer does not tell whether the address is registered.
 */
export async function confirmAccount(ctx: CommandContext, input: { email: string; code: string }, client: ClientSeen | null = null): Promise<SignedIn> {
  const owner = await accountOfEmail(ctx, input.email)
  if (!owner || !/^\d{6}$/.test(input.code)) throw invalidCode()
  const candidate = confirmationCodeHash(ctx, owner, input.code)
  const now = ctx.now().toISOString()
  const r = await users.handle(ctx, owner, { type: 'ConfirmAccount', data: { code_hash: candidate, now } }, { actor: owner })
  if (r.state.status !== 'confirmed' || !r.recorded.some(e => e.type === 'UserConfirmed')) throw invalidCode()
  faultPoint(ctx.config.fault_point, 'confirm.after_confirm')
  await reactNow(ctx, confirmAccountFlow, r)
  // Read your writes: the answer waits for the wallet's head (the grant, made now or before).
  const { position } = await wallets.load(ctx, owner)
  const signedIn = await startSession(ctx, owner, 'confirmation', { client })
  return { ...signedIn, position: Math.max(signedIn.position, position) }
}
