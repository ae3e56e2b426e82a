import { DomainError } from '../../domain/shared.ts'
import { verifyPassword } from '../../lib/crypto/hashing.ts'
import { faultPoint } from '../../lib/faults.ts'
import type { CommandContext } from '../../commands/context.ts'
import { startPasswordCheck } from '../../commands/user/start-password-check.ts'
import { users } from '../../commands/user/aggregate.ts'
import { reactNow } from '../react-now.ts'
import { deleteAccountFlow } from './flow.ts'

/**
 * DELETE /api/users/{uuid} with the password: appends UserDeleted (the flow's first fact;
 * the account's credentials stop working at once: the auth check needs an active account),
 * then the erasure follows from it (`deleteAccountFlow`, run here so the answer shows it
 * done, and by the flow worker from the committed event, so a crash in between finishes
 * all the same): every API key and agent revoked, its webhook
 * endpoints deleted, its address released (it can register again) and its data key
 * destroyed, so every address and code sealed in its events is unreadable from then on
 * (crypto-shredding, docs/design/architecture.md); projections purge its read models.
 * Fault points: `delete.after_delete`, then `delete.after_<step>` for each step.
 * @returns a global position at or after the deletion and its erasure (read your writes).
 * @throws DomainError invalid `delete_user.wrong_password`, `delete_user.already_deleted`;
 *   not_found `delete_user.not_found`.
 */
export async function deleteUser(ctx: CommandContext, owner: string, password: string): Promise<number> {
  const { state } = await users.load(ctx, owner)
  if (state.status === 'none') throw new DomainError('not_found', 'delete_user.not_found', 'no such user')
  // An erasure a crash cut short is finished by the flow worker from UserDeleted.
  if (state.status === 'deleted') throw new DomainError('invalid', 'delete_user.already_deleted', 'the account is already deleted')
  await startPasswordCheck(ctx, owner, 'delete_user')
  const passwordOk = await verifyPassword(state.password_hash, password)
  const r = await users.handle(
    ctx,
    owner,
    { type: 'DeleteUser', data: { password_ok: passwordOk, for_password_hash: state.password_hash, now: ctx.now().toISOString() } },
    { actor: owner }
  )
  faultPoint(ctx.config.fault_point, 'delete.after_delete')
  await reactNow(ctx, deleteAccountFlow, r)
  return await ctx.store.headPosition()
}
