import { DomainError } from '../../domain/shared.ts'
import type * as session from '../../domain/session/decider.ts'
import { sha256Hex } from '../../lib/crypto/hashing.ts'
import type { CommandContext } from '../context.ts'
import { sessions } from './aggregate.ts'

/**
 * Ends a session (logout, or its owner revoking it). Idempotent. With `owner`, the session
 * must belong to that user; with `presentedSecret` (logout by cookie), it must be the
 * session's current refresh token, or nothing changes.
 * @throws DomainError not_found `revoke_session.not_found`; forbidden `revoke_session.not_owner`.
 */
export async function revokeSession(
  ctx: CommandContext,
  sessionUuid: string,
  reason: 'logout' | 'revoked',
  owner?: string,
  presentedSecret?: string,
  actor?: string
): Promise<number> {
  const r = await sessions.handle(
    ctx,
    sessionUuid,
    (state: session.SessionState) => {
      if (state.status === 'none') throw new DomainError('not_found', 'revoke_session.not_found', 'no such session')
      if (owner !== undefined && state.user_uuid !== owner)
        throw new DomainError('forbidden', 'revoke_session.not_owner', 'this session belongs to another account')
      return {
        type: 'RevokeSession' as const,
        data: {
          session_uuid: sessionUuid,
          reason,
          ...(presentedSecret !== undefined && { presented_hash: sha256Hex(presentedSecret) }),
          now: ctx.now().toISOString()
        }
      }
    },
    { actor: actor ?? owner ?? null }
  )
  return r.position
}
