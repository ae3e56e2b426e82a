import type { Projection } from './projection.ts'
import { alreadyApplied } from './projection.ts'
import type { WalletEvent } from '../domain/wallet/events.ts'

/** Read model `wallets`: balance of each account (a single-stream document of `wallet-<user>`). */
export interface WalletDoc {
  [k: string]: unknown
  _id: string
  user_uuid: string
  /** Tokens available to reserve. */
  balance: number
  /** Tokens held by open reservations. */
  reserved: number
  /** Tokens ever charged (captured). */
  spent: number
  /** Tokens ever granted. */
  granted: number
  updated_at: string
  revision: number
}

/** Read model `wallet_transactions`: the ledger, one document per wallet event (inserted by event id). */
export interface WalletTransactionDoc {
  [k: string]: unknown
  _id: string
  user_uuid: string
  occurred_at: string
  /** Signed change of the available balance (tokens). */
  amount: number
  transaction_type: 'grant' | 'reservation' | 'capture' | 'release'
  job_uuid: string | null
  reason: string | null
}

export const walletsProjection: Projection = {
  name: 'wallets',
  event_types: ['TokensGranted', 'TokensReserved', 'TokensCaptured', 'TokensReleased'],
  async apply (event, { store }) {
    const wallets = store.collection<WalletDoc>('wallets')
    const ledger = store.collection<WalletTransactionDoc>('wallet_transactions')
    const e = event as unknown as WalletEvent
    const id = e.data.user_uuid
    const doc = await wallets.get(id) ?? { _id: id, user_uuid: id, balance: 0, reserved: 0, spent: 0, granted: 0, updated_at: event.metadata.occurred_at, revision: -1 }
    if (alreadyApplied(doc, event)) return
    const tx: WalletTransactionDoc = { _id: event.id, user_uuid: id, occurred_at: event.metadata.occurred_at, amount: 0, transaction_type: 'grant', job_uuid: null, reason: null }
    switch (e.type) {
      case 'TokensGranted':
        doc.balance += e.data.amount; doc.granted += e.data.amount
        Object.assign(tx, { amount: e.data.amount, transaction_type: 'grant', reason: e.data.reason })
        break
      case 'TokensReserved':
        doc.balance -= e.data.amount; doc.reserved += e.data.amount
        Object.assign(tx, { amount: -e.data.amount, transaction_type: 'reservation', job_uuid: e.data.job_uuid })
        break
      case 'TokensCaptured':
        doc.reserved -= e.data.amount; doc.spent += e.data.amount
        Object.assign(tx, { amount: 0, transaction_type: 'capture', job_uuid: e.data.job_uuid })
        break
      case 'TokensReleased':
        doc.reserved -= e.data.amount; doc.balance += e.data.amount
        Object.assign(tx, { amount: e.data.amount, transaction_type: 'release', job_uuid: e.data.job_uuid, reason: e.data.reason })
        break
    }
    await ledger.put(tx)
    await wallets.put({ ...doc, updated_at: event.metadata.occurred_at, revision: event.revision })
  }
}
