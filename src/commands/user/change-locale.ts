import { DomainError } from '../../domain/shared.ts'
import { isLocale } from '../../domain/locales.ts'
import type { CommandContext } from '../context.ts'
import { users } from './aggregate.ts'

/**
 * PATCH /api/users/me/locale: the locale of the account's transactional mails. Idempotent.
 * @throws DomainError invalid `change_locale.invalid_locale`; not_found `change_locale.not_found`.
 * @returns the global position of the append (or of the stream's head when unchanged).
 */
export async function changeLocale(ctx: CommandContext, owner: string, locale: string): Promise<number> {
  if (!isLocale(locale)) throw new DomainError('invalid', 'change_locale.invalid_locale', `unsupported locale "${locale}"`)
  const r = await users.handle(ctx, owner, { type: 'ChangeLocale', data: { locale, now: ctx.now().toISOString() } }, { actor: owner })
  return r.position
}
