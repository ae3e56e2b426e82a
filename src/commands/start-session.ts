import { issueAccessToken } from '../infra/crypto/jwt.ts'
import { randomToken, sha256Hex } from '../infra/crypto/hashing.ts'
import * as session from '../domain/session/decider.ts'
import { handle, type CommandContext } from './context.ts'

export interface SignedIn {
  access_token: string
  token_type: 'Bearer'
  /** Lifetime of the access token, seconds. */
  expires_in: number
  /** `<session uuid>.<secret>` for the `svc_refresh` cookie; only its hash is stored. */
  refresh_token: string
  refresh_expires_at: Date
  session_uuid: string
  position: number
}

/** Starts a session for a user: a `session-<uuid>` stream and an access token. */
export async function startSession (ctx: CommandContext, userUuid: string, method: 'confirmation' | 'password'): Promise<SignedIn> {
  const now = ctx.now()
  const sessionUuid = ctx.newId()
  const secret = randomToken(32)
  const expires = new Date(now.getTime() + ctx.config.refresh_token_ttl_s * 1000)
  const r = await handle(ctx, `session-${sessionUuid}`, session, {
    type: 'StartSession',
    data: { session_uuid: sessionUuid, user_uuid: userUuid, refresh_hash: sha256Hex(secret), expires_at: expires.toISOString(), started_at: now.toISOString(), method }
  }, { actor: userUuid })
  return {
    access_token: await issueAccessToken(ctx.secrets, ctx.config.jwt_issuer, { user_uuid: userUuid, session_uuid: sessionUuid }, ctx.config.access_token_ttl_s, now),
    token_type: 'Bearer',
    expires_in: ctx.config.access_token_ttl_s,
    refresh_token: `${sessionUuid}.${secret}`,
    refresh_expires_at: expires,
    session_uuid: sessionUuid,
    position: r.position
  }
}
