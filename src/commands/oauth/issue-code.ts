import * as oauth from '../../domain/oauth/decider.ts'
import { randomToken, sha256Hex } from '../../lib/crypto/hashing.ts'
import type { AuthorizationRequest } from '../../lib/crypto/jwt.ts'
import type { CommandContext } from '../context.ts'
import { oauthCodes } from './aggregate.ts'

/**
 * The account approved `request` on the consent page: a single-use code (256 bits; only
 * its SHA-256 names its stream) valid CODE_TTL_MS.
 * @returns the code for the redirect.
 */
export async function issueCode(ctx: CommandContext, userUuid: string, request: AuthorizationRequest): Promise<string> {
  const code = randomToken(32)
  const now = ctx.now()
  await oauthCodes.handle(
    ctx,
    sha256Hex(code),
    {
      type: 'IssueCode',
      data: {
        client_id: request.client_id,
        user_uuid: userUuid,
        redirect_uri: request.redirect_uri,
        scopes: request.scopes,
        code_challenge: request.code_challenge,
        expires_at: new Date(now.getTime() + oauth.CODE_TTL_MS).toISOString(),
        issued_at: now.toISOString()
      }
    },
    { actor: userUuid }
  )
  return code
}
