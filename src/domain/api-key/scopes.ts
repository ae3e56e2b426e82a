/** Scopes of the interface document (section 5, "Scopes"). */
export const SCOPES = [
  'email:verify:single',
  'email:verify:bulk',
  'results:read',
  'usage:read',
  'billing:read',
  'api_keys:read',
  'api_keys:create',
  'api_keys:revoke',
  'webhooks:read',
  'webhooks:create',
  'webhooks:update',
  'webhooks:delete'
] as const
export type Scope = (typeof SCOPES)[number]

/** Scopes a key gets when `scopes` is omitted at creation: verification and reading, no management. */
export const DEFAULT_KEY_SCOPES: readonly Scope[] = ['email:verify:single', 'email:verify:bulk', 'results:read', 'usage:read', 'billing:read']

/**
 * Whether a scope only reads (`…:read`): a credential holding read scopes alone changes
 * nothing (issue 42 item 5), so an operation that writes never accepts one of these alone.
 */
export const isReadScope = (s: Scope): boolean => s.endsWith(':read')

export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s)
}
