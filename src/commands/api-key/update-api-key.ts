import { DomainError } from '../../domain/shared.ts'
import type * as apikey from '../../domain/api-key/decider.ts'
import { CHECK_NAMES, isCheckName } from '../../domain/checks.ts'
import { planOf } from '../../projections/subscriptions.ts'
import type { CommandContext } from '../context.ts'
import { apiKeys } from './aggregate.ts'

/**
 * PATCH /api/keys/{uuid}: renames the key and/or sets its enabled checks (omitted fields
 * keep theirs; a rate limit is never writable). The checks must be allowed by the
 * account's plan and held by the credential making the change.
 * Reads the plan from the `subscriptions` read model: safe because a plan only widens or
 * narrows caps between billing events, seconds apart at most from the stream, and every
 * cap is decided again on the aggregate's own stream at the append (a stale plan admits
 * at most what the plan allowed a moment ago; nothing is spent or granted on it).
 * @returns the position of the change (or of the stream's head when nothing changed).
 * @throws DomainError invalid `update_api_key.empty`, `update_api_key.invalid_name`,
 *   `update_api_key.invalid_checks`; forbidden `update_api_key.check_not_allowed`,
 *   `update_api_key.check_not_held`, `update_api_key.revoked`, `update_api_key.environment_not_held`.
 */
export async function updateApiKey(
  ctx: CommandContext,
  input: { user_uuid: string; key_uuid: string; name?: string; enabled_checks?: string[]; granter: apikey.Granter; actor: string }
): Promise<number> {
  if (input.name === undefined && input.enabled_checks === undefined)
    throw new DomainError('invalid', 'update_api_key.empty', 'give name and/or enabled_checks')
  const name = input.name?.trim()
  if (name !== undefined && (name.length < 1 || name.length > 100))
    throw new DomainError('invalid', 'update_api_key.invalid_name', 'name must be 1 to 100 characters')
  if (input.enabled_checks && (input.enabled_checks.length === 0 || !input.enabled_checks.every(isCheckName)))
    throw new DomainError('invalid', 'update_api_key.invalid_checks', `enabled_checks must be a non-empty list of: ${CHECK_NAMES.join(', ')}`)
  const checks = input.enabled_checks === undefined ? undefined : CHECK_NAMES.filter(c => input.enabled_checks!.includes(c))
  const plan = await planOf(ctx, ctx.config.plans, input.user_uuid)
  const r = await apiKeys.handle(
    ctx,
    input.user_uuid,
    {
      type: 'UpdateApiKey',
      data: {
        key_uuid: input.key_uuid,
        ...(name !== undefined && { name: await ctx.sealer.seal(input.user_uuid, name) }),
        ...(checks !== undefined && { enabled_checks: checks }),
        plan_checks: plan.allowed_checks,
        granter: input.granter,
        now: ctx.now().toISOString()
      }
    },
    { actor: input.actor }
  )
  return r.position
}
