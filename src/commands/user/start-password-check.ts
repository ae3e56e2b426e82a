import type { CommandContext } from '../context.ts'
import { users } from './aggregate.ts'

/**
 * Counts a password check before the password is judged (OWASP ASVS 5.0 V6.3.1: brute
 * force bounded): StartPasswordCheck appends PasswordCheckStarted on the account's stream,
 * one at a time per account (its expected revision), so of any number of concurrent
 * guesses at most LOGIN_FAILURES_BEFORE_LOCK are ever judged; the operation's success
 * clears the count. Sign-in and the current-password checks (email change, password
 * change, deletion, two-factor on and off) share this lock.
 * @throws DomainError locked `<operation>.locked` while the account is locked.
 */
export async function startPasswordCheck(ctx: CommandContext, owner: string, operation: string): Promise<void> {
  await users.handle(ctx, owner, { type: 'StartPasswordCheck', data: { operation, now: ctx.now().toISOString() } }, { actor: owner })
}
