import Bowser from 'bowser'
import ipaddr from 'ipaddr.js'
import { issueAccessToken } from '../../lib/crypto/jwt.ts'
import { hmacHex, randomToken, sha256Hex } from '../../lib/crypto/hashing.ts'
import { issuersOf, type CommandContext } from '../context.ts'
import { sessions } from './aggregate.ts'

export interface SignedIn {
  access_token: string
  token_type: 'Bearer'
  /** Lifetime of the access token, seconds. */
  expires_in: number
  /** `<session uuid>.<secret>` for the `svc_refresh` cookie; only its hash is stored. */
  refresh_token: string
  refresh_expires_at: Date
  session_uuid: string
  /** Whose session it is. */
  user_uuid: string
  position: number
  /** An OAuth grant's client and scopes (absent for a sign-in session). */
  grant?: { client_id: string; scopes: string[] } | null
}

/** Where a sign-in comes from, as the HTTP layer sees it. */
export interface ClientSeen {
  user_agent: string | null
  ip: string
}

/**
 * A client as a session records it: an HMAC of the account, the user agent and the
 * network (IPv4 /24, IPv6 /48, so that a new address on the same network is the same
 * client), and a readable label from the user agent (`bowser`).
 */
function clientOf(ctx: CommandContext, userUuid: string, seen: ClientSeen): { id: string; label: string } {
  let network = seen.ip
  try {
    const addr = ipaddr.process(seen.ip)
    network = addr.kind() === 'ipv4' ? addr.toString().split('.').slice(0, 3).join('.') : (addr as ipaddr.IPv6).parts.slice(0, 3).join(':')
  } catch {
    /* not an IP address: kept as it is, hashed */
  }
  const ua = (seen.user_agent ?? '').slice(0, 512)
  const parsed = ua ? Bowser.getParser(ua) : null
  const browser = parsed?.getBrowserName() || null
  const os = parsed?.getOSName() || null
  const label = browser && os ? `${browser} on ${os}` : (browser ?? os ?? 'an unknown client')
  return { id: hmacHex(ctx.secrets.code_key, `client:${userUuid}:${ua}:${network}`).slice(0, 32), label }
}

/** How a session starts beyond its user and method (all optional). */
export interface SessionStart {
  /** Where the sign-in comes from. */
  client?: ClientSeen | null
  /** An OAuth grant: its client and consented scopes, under the uuid the code exchange chose. */
  oauth?: { session_uuid: string; grant: { client_id: string; scopes: string[] } } | null
  /** The refresh token's lifetime (s), when shorter than `REFRESH_TOKEN_TTL_S` (the consent page's sign-in). */
  refresh_ttl_s?: number
}

/**
 * Starts a session for a user: a `session-<uuid>` stream and an access token. An OAuth
 * grant (method `oauth`) is a session bound to its client and consented scopes, started
 * under the uuid chosen by the code exchange (`oauth.session_uuid`).
 */
export async function startSession(
  ctx: CommandContext,
  userUuid: string,
  method: 'confirmation' | 'password' | 'oauth',
  start: SessionStart = {}
): Promise<SignedIn> {
  const { client = null, oauth = null } = start
  const now = ctx.now()
  const sessionUuid = oauth?.session_uuid ?? ctx.newId()
  const secret = randomToken(32)
  const expires = new Date(now.getTime() + (start.refresh_ttl_s ?? ctx.config.refresh_token_ttl_s) * 1000)
  const r = await sessions.handle(
    ctx,
    sessionUuid,
    {
      type: 'StartSession',
      data: {
        session_uuid: sessionUuid,
        user_uuid: userUuid,
        refresh_hash: sha256Hex(secret),
        expires_at: expires.toISOString(),
        started_at: now.toISOString(),
        method,
        client: client ? clientOf(ctx, userUuid, client) : null,
        ...(oauth && { grant: oauth.grant })
      }
    },
    { actor: userUuid }
  )
  return {
    access_token: await issueAccessToken(
      ctx.secrets,
      issuersOf(ctx),
      { user_uuid: userUuid, session_uuid: sessionUuid, grant: oauth?.grant ?? null },
      ctx.config.access_token_ttl_s,
      now
    ),
    token_type: 'Bearer',
    expires_in: ctx.config.access_token_ttl_s,
    refresh_token: `${sessionUuid}.${secret}`,
    refresh_expires_at: expires,
    session_uuid: sessionUuid,
    user_uuid: userUuid,
    position: r.position
  }
}
