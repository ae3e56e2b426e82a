import type { Event } from '../shared.ts'

/** Tokens added to the wallet: a plan's allowance or an operator's credit. */
export type TokensGranted = Event<'TokensGranted', {
  user_uuid: string
  grant_uuid: string
  amount: number
  source: 'plan' | 'operator'
  plan: string | null
  reason: string
  granted_at: string
}>

/** Tokens held for a job before it is queued (ARCHITECTURE.md "Money"). */
export type TokensReserved = Event<'TokensReserved', { user_uuid: string, job_uuid: string, amount: number, reserved_at: string }>

/** A reservation turned into a charge (firm verdict). */
export type TokensCaptured = Event<'TokensCaptured', { user_uuid: string, job_uuid: string, amount: number, captured_at: string }>

/** A reservation given back (verdict `unknown`, or the job failed). */
export type TokensReleased = Event<'TokensReleased', { user_uuid: string, job_uuid: string, amount: number, reason: string, released_at: string }>

export type WalletEvent = TokensGranted | TokensReserved | TokensCaptured | TokensReleased

export const WALLET_EVENT_TYPES = ['TokensGranted', 'TokensReserved', 'TokensCaptured', 'TokensReleased'] as const
