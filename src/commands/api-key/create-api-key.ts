import { randomBytes } from 'node:crypto'
import { DomainError } from '../../domain/shared.ts'
import type * as apikey from '../../domain/api-key/decider.ts'
import type { ApiKeyCreated } from '../../domain/api-key/events.ts'
import { DEFAULT_KEY_SCOPES, isScope, type Scope } from '../../domain/api-key/scopes.ts'
import { CHECK_NAMES, isCheckName, type CheckName } from '../../domain/checks.ts'
import { planOf } from '../../projections/subscriptions.ts'
import { sha256Hex } from '../../lib/crypto/hashing.ts'
import type { CommandContext } from '../context.ts'
import { apiKeys } from './aggregate.ts'

export interface CreatedKey {
  key_uuid: string
  /** What the key was created with (its ApiKeyCreated event), its name in the clear. */
  key: ApiKeyCreated['data']
  raw_key: string
  position: number
}

/** A raw key: `svc_` (live) or `svc_test_` (test) and 32 random bytes, base64url. */
function newRawKey(environment: 'live' | 'test'): string {
  return `${environment === 'test' ? 'svc_test_' : 'svc_'}${randomBytes(32).toString('base64url')}`
}

/**
 * POST /api/keys: creates a key with the given name, environment, scopes and enabled
 * checks on the account's `apikeys-<user>` stream; the plan seeds its rate limit and caps
 * the usable keys. A credential grants only what it holds: omitted scopes and checks
 * default to the project defaults it holds, named ones must all be held. Only the key's
 * SHA-256 is stored; the raw key is returned once.
 * Reads the plan from the `subscriptions` read model: safe because a plan only widens or
 * narrows caps between billing events, seconds apart at most from the stream, and every
 * cap is decided again on the aggregate's own stream at the append (a stale plan admits
 * at most what the plan allowed a moment ago; nothing is spent or granted on it).
 * @throws DomainError invalid `create_api_key.invalid_name|invalid_scopes|invalid_checks`;
 *   forbidden `create_api_key.limit_reached`, `create_api_key.check_not_allowed` (plan),
 *   `create_api_key.scope_not_held`, `create_api_key.check_not_held`,
 *   `create_api_key.environment_not_held` (credential: a test key mints test keys only).
 */
export async function createApiKey(
  ctx: CommandContext,
  input: { user_uuid: string; name: string; environment: 'live' | 'test'; scopes?: string[]; enabled_checks?: string[]; granter: apikey.Granter; actor: string }
): Promise<CreatedKey> {
  const name = input.name.trim()
  if (name.length < 1 || name.length > 100) throw new DomainError('invalid', 'create_api_key.invalid_name', 'name must be 1 to 100 characters')
  if (input.scopes && (input.scopes.length === 0 || !input.scopes.every(isScope)))
    throw new DomainError('invalid', 'create_api_key.invalid_scopes', 'scopes must be a non-empty list of known scopes')
  if (input.enabled_checks && (input.enabled_checks.length === 0 || !input.enabled_checks.every(isCheckName)))
    throw new DomainError('invalid', 'create_api_key.invalid_checks', `enabled_checks must be a non-empty list of: ${CHECK_NAMES.join(', ')}`)
  const scopes = (input.scopes ?? DEFAULT_KEY_SCOPES.filter(s => input.granter.scopes.includes(s))) as Scope[]
  const checks = (input.enabled_checks ?? CHECK_NAMES.filter(c => input.granter.enabled_checks.includes(c))) as CheckName[]
  if (scopes.length === 0)
    throw new DomainError('forbidden', 'create_api_key.scope_not_held', 'this credential holds none of the default scopes; name the scopes to grant')
  const plan = await planOf(ctx, ctx.config.plans, input.user_uuid)
  const notAllowed = checks.filter(c => !plan.allowed_checks.includes(c))
  if (notAllowed.length > 0) throw new DomainError('forbidden', 'create_api_key.check_not_allowed', `your plan does not include: ${notAllowed.join(', ')}`)

  const keyUuid = ctx.newId()
  const raw = newRawKey(input.environment)
  const r = await apiKeys.handle(
    ctx,
    input.user_uuid,
    {
      type: 'CreateApiKey',
      data: {
        key_uuid: keyUuid,
        user_uuid: input.user_uuid,
        // A customer's free text: sealed with the account's data key like the address (erased with the account).
        name: await ctx.sealer.seal(input.user_uuid, name),
        environment: input.environment,
        key_hash: sha256Hex(raw),
        key_prefix: raw.slice(0, input.environment === 'test' ? 13 : 8),
        scopes: [...new Set(scopes)],
        enabled_checks: CHECK_NAMES.filter(c => checks.includes(c)),
        rate_limit_per_minute: plan.rate_limit_per_minute,
        created_at: ctx.now().toISOString(),
        max_keys: plan.max_api_keys,
        granter: input.granter
      }
    },
    { actor: input.actor }
  )
  const key = r.events.find((e): e is ApiKeyCreated => e.type === 'ApiKeyCreated')!.data
  return { key_uuid: keyUuid, key: { ...key, name }, raw_key: raw, position: r.position }
}
