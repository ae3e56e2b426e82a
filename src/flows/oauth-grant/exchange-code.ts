import { createHash } from 'node:crypto'
import { DomainError } from '../../domain/shared.ts'
import type * as oauth from '../../domain/oauth/decider.ts'
import * as user from '../../domain/user/decider.ts'
import { sha256Hex } from '../../lib/crypto/hashing.ts'
import type { CommandContext } from '../../commands/context.ts'
import type { HandleResult } from '../../eventsourcing/command-handler.ts'
import type { AuthorizationCodeEvent } from '../../domain/oauth/events.ts'
import { revokeSession } from '../../commands/session/revoke-session.ts'
import { startSession, type SignedIn } from '../../commands/session/start-session.ts'
import { OAuthError } from '../../domain/oauth/oauth-error.ts'
import { oauthCodes } from '../../commands/oauth/aggregate.ts'
import { users } from '../../commands/user/aggregate.ts'

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

/**
 * POST /oauth/token `authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.5): the code, for
 * its client and redirect URI, with a verifier whose S256 is the code's challenge, starts a
 * grant (a session, method `oauth`, bound to the client and the consented scopes). A code
 * exchanged a second time is refused and the grant its first exchange started is revoked.
 * @throws OAuthError `invalid_request`, `invalid_grant` (400).
 */
export async function exchangeCode(
  ctx: CommandContext,
  input: { code?: string; client_id?: string; redirect_uri?: string; code_verifier?: string }
): Promise<SignedIn & { scopes: string[] }> {
  if (!input.code || !input.client_id || !input.redirect_uri || !input.code_verifier)
    throw new OAuthError('invalid_request', 'code, client_id, redirect_uri and code_verifier are required')
  if (!VERIFIER.test(input.code_verifier)) throw new OAuthError('invalid_request', 'code_verifier: 43 to 128 unreserved characters (RFC 7636 §4.1)')
  const codeHash = sha256Hex(input.code)
  const { state } = await oauthCodes.load(ctx, codeHash)
  const challenge = createHash('sha256').update(input.code_verifier).digest('base64url')
  const sessionUuid = ctx.newId()
  let r: HandleResult<oauth.CodeState, AuthorizationCodeEvent>
  try {
    r = await oauthCodes.handle(
      ctx,
      codeHash,
      {
        type: 'ExchangeCode',
        data: {
          client_id: input.client_id,
          redirect_uri: input.redirect_uri,
          verifier_ok: state.status !== 'none' && challenge === state.code_challenge,
          session_uuid: sessionUuid,
          now: ctx.now().toISOString()
        }
      },
      { actor: null }
    )
  } catch (err) {
    if (err instanceof DomainError && err.code === 'token.invalid_grant') throw new OAuthError('invalid_grant', err.message)
    throw err
  }
  const redeemed = r.events.some(e => e.type === 'AuthorizationCodeRedeemed')
  if (!redeemed) {
    // A code used again: the grant its first exchange started ends (if it has started yet:
    // otherwise that exchange sees the replay below and ends it itself).
    const replay = r.events.find(e => e.type === 'AuthorizationCodeReplayed')
    const position = replay
      ? await revokeSession(ctx, replay.data.session_uuid, 'revoked').catch((err: unknown) => {
          if (!(err instanceof DomainError)) throw err
          return null
        })
      : null
    throw new OAuthError('invalid_grant', 'the authorization code was used already; what it issued is revoked', 400, position)
  }
  const issued = r.state as Exclude<oauth.CodeState, { status: 'none' }>
  const { state: account } = await users.load(ctx, issued.user_uuid)
  if (!user.isActive(account)) throw new OAuthError('invalid_grant', 'the account is not active')
  const signedIn = await startSession(ctx, issued.user_uuid, 'oauth', {
    oauth: { session_uuid: sessionUuid, grant: { client_id: issued.client_id, scopes: issued.scopes } }
  })
  // Two exchanges at once: the second's replay may have landed before this grant existed.
  const after = (await oauthCodes.load(ctx, codeHash)).state
  if (after.status !== 'none' && after.replayed) {
    const position = await revokeSession(ctx, sessionUuid, 'revoked')
    throw new OAuthError('invalid_grant', 'the authorization code was used twice at once; what it issued is revoked', 400, position)
  }
  return { ...signedIn, scopes: issued.scopes }
}
