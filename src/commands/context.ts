import type { EventStore } from '../ports/event-store.ts'
import type { ReadStore } from '../ports/read-store.ts'
import type { Sealer } from '../ports/sealer.ts'
import type { Secrets } from '../lib/crypto/secrets.ts'
import type { Config } from '../config.ts'
import type { VerificationResult } from '../verifier/result.ts'
import { UnknownSignIns } from '../domain/user/unknown-sign-ins.ts'
import { uuidv7 } from '../lib/ids.ts'

/** What command handlers need: ports, secrets, configuration, a clock and an id source. */
export interface CommandContext {
  store: EventStore
  reads: ReadStore
  sealer: Sealer
  secrets: Secrets
  config: Config
  now: () => Date
  /** A new UUIDv7 (time-ordered public id). */
  newId: () => string
  /**
   * The service's base URL, from configuration only (`PUBLIC_URL`, else the address the
   * process listens on): the OAuth issuer (RFC 8414 §2, RFC 9068 §2.2 `iss`) and the base
   * of every link given out; never taken from a request.
   */
  base_url: () => string
  /**
   * Checks an address with the verification engine (sign-up screening); absent where
   * the process has no engine, and then sign-up checks syntax and lists only.
   */
  screen?: (email: string) => Promise<VerificationResult>
  /** Sign-in attempts for addresses without an account (they lock like an account's). */
  unknown_sign_ins: UnknownSignIns
}

/** Who issues access tokens (`JWT_ISSUER` for sign-ins, the base URL for OAuth grants: see `Issuers`). */
export function issuersOf(ctx: Pick<CommandContext, 'config' | 'base_url'>): { session: string; oauth: string } {
  return { session: ctx.config.jwt_issuer, oauth: ctx.base_url() }
}

/** The process's clock and id source, and its in-memory sign-in counts for unknown addresses. */
export function defaultClockAndIds(): Pick<CommandContext, 'now' | 'newId' | 'unknown_sign_ins'> {
  return { now: () => new Date(), newId: () => uuidv7(), unknown_sign_ins: new UnknownSignIns() }
}
