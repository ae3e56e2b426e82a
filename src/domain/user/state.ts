/** The state of a user stream as the user decider folds it (src/domain/user/decider.ts). */
export type UserState = { status: 'none' } | Account

export interface Account {
  status: 'unconfirmed' | 'confirmed' | 'deleted'
  banned: boolean
  /** Sessions started before this are void (a ban revokes every session). */
  sessions_valid_from: string | null
  /** Times of wrong passwords since the last successful sign-in (the latest LOGIN_FAILURES_BEFORE_LOCK). */
  login_failures: string[]
  user_uuid: string
  /** Sealed. */
  email: string
  password_hash: string
  locale: string
  /** When the (latest) registration was made (absent in snapshots older than it: never expires). */
  registered_at?: string
  code: { hash: string; expires_at: string; failed: number } | null
  /** When confirmation codes were issued in the last 24 h (for the cooldown and the daily allowance). */
  codes_issued: string[]
  reset: { hash: string; expires_at: string; requested_at: string } | null
  two_factor: TwoFactorState
  email_change: { new_email: string; hash: string; expires_at: string } | null
}

/** Two-factor: not enabled, setup in progress, active (docs/interface.md §3). */
export interface TwoFactorState {
  status: 'off' | 'setup' | 'active'
  /** The TOTP secret, sealed. */
  secret: string | null
  backup_code_hashes: string[]
  /** Last accepted TOTP time step (a code is never accepted twice). */
  last_step: number
  /** Recent failed codes (for the temporary lock; the latest TWO_FACTOR_FAILURES_BEFORE_LOCK). */
  failures: string[]
  /** Sign-in challenges completed lately (the latest SPENT_CHALLENGES): each is single use. */
  used_challenges?: string[]
}
