import type { RecordedEvent } from '../ports/event-store.ts'
import type { TokensCaptured, TokensGranted, TokensReleased, TokensReserved } from '../domain/wallet/events.ts'
import type { CollectionSpec, Doc } from '../ports/read-store.ts'
import { alreadyApplied, collection, documentsProjection, erasing, type Projection, type Write } from '../eventsourcing/projection.ts'
import type { ReadContext } from './read-context.ts'
import { SLOT_MS, slotOf } from './buckets.ts'

/** Read model `wallets`: the balance of each account, and how many transactions and groups its ledger has. */
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
  transactions: number
  groups: number
  updated_at: string
}

export type TransactionType = 'grant' | 'reservation' | 'capture' | 'release'

/** Read model `wallet_transactions`: the ledger, one document per wallet event (keyed by event id). */
export interface WalletTransactionDoc {
  [k: string]: unknown
  _id: string
  user_uuid: string
  occurred_at: string
  /** Signed change of the available balance (tokens): a capture changes nothing (its tokens were held). */
  amount: number
  /** Tokens the event moved (a capture's charge). */
  tokens: number
  transaction_type: TransactionType
  job_uuid: string | null
  reason: string | null
  /** The available balance after it. */
  balance_after: number
  /** Ledger order: the revision of its event in the wallet stream. */
  seq: number
}

/** Read model `wallet_groups`: a job's transactions together (reservation, capture, releases), or a grant alone. */
interface WalletGroupDoc {
  [k: string]: unknown
  _id: string
  user_uuid: string
  job_uuid: string | null
  /** When the group started (its first transaction): groups sort on it. */
  occurred_at: string
  last_at: string
  /** Net change of the available balance. */
  amount: number
  /** The first transaction's type (`reservation` for a job, `grant`). */
  transaction_type: TransactionType
  /** Ledger order of its first transaction. */
  seq: number
  transactions: Array<Pick<WalletTransactionDoc, '_id' | 'occurred_at' | 'amount' | 'tokens' | 'transaction_type' | 'reason'>>
}

/** Read model `wallet_balances`: the available balance at the end of each 15-minute slot with wallet activity. */
interface WalletBalanceDoc {
  [k: string]: unknown
  _id: string
  user_uuid: string
  slot: string
  balance: number
}

export const WALLETS = collection({ name: 'wallets', projection: 'wallets', fields: { user_uuid: 'text' }, indexes: [['user_uuid']] })
/**
 * Sorted by time, amount or type, each then by time and ledger order (`seq`, the wallet
 * stream's revision) as tiebreaks: an index each, so a page reads `offset + limit` index
 * entries; counted by the wallet document.
 */
/** The fields and indexes of a ledger list: every sort the interface offers (date, amount, type), per account, with `seq` breaking ties. */
const LEDGER_ORDERS = {
  fields: { user_uuid: 'text', occurred_at: 'text', amount: 'number', transaction_type: 'text', seq: 'number' },
  indexes: [
    ['user_uuid', 'occurred_at', 'seq'],
    ['user_uuid', 'amount', 'occurred_at', 'seq'],
    ['user_uuid', 'transaction_type', 'occurred_at', 'seq']
  ]
} as const

export const WALLET_TRANSACTIONS = collection({
  name: 'wallet_transactions',
  projection: 'wallets',
  ...LEDGER_ORDERS
})
/** As the transactions, a group ordered by its first one. */
export const WALLET_GROUPS = collection({
  name: 'wallet_groups',
  projection: 'wallets',
  ...LEDGER_ORDERS
})
/** At most one document per account and 15-minute slot (index user_uuid, slot). */
export const WALLET_BALANCES = collection({
  name: 'wallet_balances',
  projection: 'wallets',
  fields: { user_uuid: 'text', slot: 'text' },
  indexes: [['user_uuid', 'slot']]
})

type WalletChange = TokensGranted | TokensReserved | TokensCaptured | TokensReleased

/** What a wallet event does to the available balance and as what transaction (the ledger's rules). */
export function transactionOf(e: WalletChange): { type: TransactionType; amount: number; tokens: number; job_uuid: string | null; reason: string | null } {
  switch (e.type) {
    case 'TokensGranted':
      return { type: 'grant', amount: e.data.amount, tokens: e.data.amount, job_uuid: null, reason: e.data.reason }
    case 'TokensReserved':
      return { type: 'reservation', amount: -e.data.amount, tokens: e.data.amount, job_uuid: e.data.job_uuid, reason: null }
    case 'TokensCaptured':
      return { type: 'capture', amount: 0, tokens: e.data.amount, job_uuid: e.data.job_uuid, reason: null }
    case 'TokensReleased':
      return { type: 'release', amount: e.data.amount, tokens: e.data.amount, job_uuid: e.data.job_uuid, reason: e.data.reason }
  }
}

/** The wallet's four totals an event moves its amount between, each with the sign of the move. */
type Move = ReadonlyArray<readonly ['balance' | 'reserved' | 'spent' | 'granted', 1 | -1]>
/**
 * How each wallet event moves its amount (interface "Wallet"): a grant adds to the balance
 * (and to what was granted), a reservation holds tokens out of the balance, a capture
 * spends held tokens, a release gives held tokens back to the balance.
 */
const MOVES: Readonly<Record<WalletChange['type'], Move>> = {
  TokensGranted: [
    ['balance', 1],
    ['granted', 1]
  ],
  TokensReserved: [
    ['balance', -1],
    ['reserved', 1]
  ],
  TokensCaptured: [
    ['reserved', -1],
    ['spent', 1]
  ],
  TokensReleased: [
    ['reserved', -1],
    ['balance', 1]
  ]
}

/** The ledger group an event belongs to: its job's, or its own (a grant). */
const groupOf = (user: string, e: WalletChange, event: RecordedEvent): string => `${user}|${transactionOf(e).job_uuid ?? event.id}`

/** A stored wallet document: with the position of the last event applied, or the tombstone of an erased account. */
type StoredWallet = WalletDoc & { position?: number; erased?: boolean }

/**
 * The wallets' fold (pure): from the account's wallet document and the event's ledger
 * group, the writes of one wallet event — the balance document, the ledger transaction
 * (keyed by event id), the group, and the closing balance of its 15-minute slot. An event
 * at or below the wallet's `position` was applied already (a second delivery): nothing.
 */
function evolveWallets(docs: ReadonlyArray<Doc | null>, event: RecordedEvent): Write[] {
  const user = event.data.user_uuid as string
  const stored = docs[0] as StoredWallet | null
  if (event.type === 'UserDeleted')
    // A tombstone: settlements after the erasure make no documents again.
    return [
      ...erasing([WALLETS, WALLET_TRANSACTIONS, WALLET_GROUPS, WALLET_BALANCES], user),
      { put: WALLETS, doc: { _id: user, user_uuid: null, erased: true } }
    ]
  if (stored?.erased === true || alreadyApplied(stored, event)) return []
  const group = docs[1] as WalletGroupDoc | null
  const e = event as unknown as WalletChange
  const at = event.metadata.occurred_at
  const w = stored ? { ...stored } : { _id: user, user_uuid: user, balance: 0, reserved: 0, spent: 0, granted: 0, transactions: 0, groups: 0, updated_at: at }
  const tx = transactionOf(e)
  for (const [account, sign] of MOVES[e.type]) w[account] += sign * e.data.amount
  const doc: WalletTransactionDoc = {
    _id: event.id,
    user_uuid: user,
    occurred_at: at,
    amount: tx.amount,
    tokens: tx.tokens,
    transaction_type: tx.type,
    job_uuid: tx.job_uuid,
    reason: tx.reason,
    balance_after: w.balance,
    seq: event.revision
  }
  const entry = { _id: doc._id, occurred_at: at, amount: doc.amount, tokens: doc.tokens, transaction_type: doc.transaction_type, reason: doc.reason }
  const slot = slotOf(at)
  return [
    { put: WALLET_TRANSACTIONS, doc },
    {
      put: WALLET_GROUPS,
      doc: group
        ? { ...group, last_at: at, amount: group.amount + doc.amount, transactions: [...group.transactions, entry] }
        : {
            _id: groupOf(user, e, event),
            user_uuid: user,
            job_uuid: tx.job_uuid,
            occurred_at: at,
            last_at: at,
            amount: doc.amount,
            transaction_type: doc.transaction_type,
            seq: event.revision,
            transactions: [entry]
          }
    },
    { put: WALLET_BALANCES, doc: { _id: `${user}|${slot}`, user_uuid: user, slot, balance: w.balance } },
    { put: WALLETS, doc: { ...w, transactions: w.transactions + 1, groups: w.groups + (group ? 0 : 1), updated_at: at, position: event.position } }
  ]
}

/**
 * The wallets: per account the balance document, one ledger document per wallet event
 * (inserted by event id), the job groups, and the balance at the end of each 15-minute
 * slot (for `balance-history`). Books closings are not transactions: not projected. An
 * erased account's documents are deleted, leaving a tombstone without personal data.
 */
export const walletsProjection: Projection = documentsProjection({
  // 4: the wallet document keeps the position of its last event (a second delivery counts once).
  version: 4,
  collections: [WALLETS, WALLET_TRANSACTIONS, WALLET_GROUPS, WALLET_BALANCES],
  event_types: ['TokensGranted', 'TokensReserved', 'TokensCaptured', 'TokensReleased', 'UserDeleted'],
  reads: event => {
    const user = event.data.user_uuid as string
    return event.type === 'UserDeleted'
      ? [[WALLETS, user]]
      : [
          [WALLETS, user],
          [WALLET_GROUPS, groupOf(user, event as unknown as WalletChange, event)]
        ]
  },
  evolve: evolveWallets
})

/** The account's wallet (primary key: the account uuid), or null (none yet, or erased). */
export async function getWallet(rc: Pick<ReadContext, 'reads'>, owner: string): Promise<WalletDoc | null> {
  const w = await rc.reads.collection<WalletDoc & { erased?: boolean }>(WALLETS).get(owner)
  return w && w.erased !== true ? w : null
}

export const TRANSACTION_SORTS = ['occurred_at', 'amount', 'transaction_type'] as const
export type TransactionSort = (typeof TRANSACTION_SORTS)[number]

const sortKeys = (sort: TransactionSort, order: 1 | -1): ReadonlyArray<readonly [string, 1 | -1]> =>
  sort === 'occurred_at'
    ? [
        ['occurred_at', order],
        ['seq', order]
      ]
    : [
        [sort, order],
        ['occurred_at', order],
        ['seq', order]
      ]

/** The ledger's two views: its transactions (one per wallet event) and its groups (a job's transactions together). */
interface LedgerViews {
  transactions: WalletTransactionDoc
  groups: WalletGroupDoc
}
const LEDGER_VIEWS: { readonly [V in keyof LedgerViews]: CollectionSpec } = { transactions: WALLET_TRANSACTIONS, groups: WALLET_GROUPS }

/**
 * A page of the account's ledger (interface `GET /api/wallet/transactions`, and
 * `…/transactions/grouped` with `view` `groups`: newest group first by default), each sort
 * an index range; the total is the count the wallet document keeps of the view. Cost: one
 * index range of `page.limit` documents and one wallet read, whatever the ledger's length.
 */
export async function listLedger<V extends keyof LedgerViews>(
  rc: Pick<ReadContext, 'reads'>,
  view: V,
  owner: string,
  sort: TransactionSort,
  order: 1 | -1,
  page: { limit: number; offset: number }
): Promise<{ items: Array<LedgerViews[V]>; total: number }> {
  const [items, wallet] = await Promise.all([
    rc.reads.collection<LedgerViews[V]>(LEDGER_VIEWS[view]).find({ where: { user_uuid: owner }, sort: sortKeys(sort, order), ...page }),
    getWallet(rc, owner)
  ])
  return { items, total: wallet?.[view] ?? 0 }
}

/**
 * The available balance at each of `ends` (ascending instants, RFC 3339): the closing
 * balance of the last slot with activity before each (0 before the first), by the index
 * (user_uuid, slot), whichever way reads less: a seek to the last slot before each end
 * when the ends are few for their window (a year by day, week or month: at most 364
 * seeks, not up to 35,000 slots), or else the slots between the first and last end plus
 * the one before, in one range (hours: about four slots an end). Bounded by the window.
 */
export async function balancesAt(rc: Pick<ReadContext, 'reads'>, owner: string, ends: readonly string[]): Promise<number[]> {
  if (ends.length === 0) return []
  const c = rc.reads.collection<WalletBalanceDoc>(WALLET_BALANCES)
  const first = ends[0]
  const last = ends[ends.length - 1]
  // The closing balance of the last slot that starts before `end` (0 when none).
  const lastBefore = async (end: string): Promise<number> =>
    (await c.find({ where: { user_uuid: owner, slot: { lte: new Date(Date.parse(end) - 1).toISOString() } }, sort: [['slot', -1]], limit: 1 }))[0]?.balance ?? 0
  if (ends.length * SEEK_EVERY <= (Date.parse(last) - Date.parse(first)) / SLOT_MS) return await Promise.all(ends.map(lastBefore))
  const [before, slots] = await Promise.all([
    lastBefore(first),
    c.find({ where: { user_uuid: owner, slot: { gte: slotOf(first), lte: last } }, sort: [['slot', 1]] })
  ])
  let balance = before
  let i = 0
  return ends.map(end => {
    // A slot counts for an end when it starts before it (its closing balance is the latest known then).
    while (i < slots.length && slots[i].slot < end) balance = slots[i++].balance
    return balance
  })
}

/** A seek per end costs about as much as reading this many slots in a range (so seeks when the window has more slots per end). */
const SEEK_EVERY = 8
