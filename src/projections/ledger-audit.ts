import type { EventStore, RecordedEvent } from '../ports/event-store.ts'
import type { WalletEvent } from '../domain/wallet/events.ts'
import { evolve, initialState, type WalletState } from '../domain/wallet/decider.ts'
import { closingDiscrepancies } from '../domain/wallet/audit.ts'
import { transactionOf, WALLET_TRANSACTIONS, WALLETS, type WalletDoc, type WalletTransactionDoc } from './wallets.ts'
import type { ReadContext } from './read-context.ts'

/** Events read at a time (a page of the store, or of one account's stream). */
const AUDIT_PAGE = 5_000

const WALLET_TYPES = new Set(['TokensGranted', 'TokensReserved', 'TokensCaptured', 'TokensReleased', 'WalletBooksClosed'])

/** What `svc ledger audit` found. */
export interface LedgerAudit {
  /** The position audited through (the wallets projection's checkpoint when the audit started). */
  through: number
  accounts: number
  transactions: number
  differences: string[]
}

interface Replayed {
  state: WalletState
  granted: number
  spent: number
  reserved: number
  transactions: number
  revision: number
}

/**
 * Replays the `wallet-*` streams alone (docs/design/architecture.md "Ledger audit") and compares what
 * they make with what the API shows: each account's balance, reserved, spent and granted
 * tokens and its number of transactions (`wallets`), and every transaction
 * (`wallet_transactions`, by event id: amount, type, job, time, balance after). Also
 * checks each closing of the books against the replay. Audits through the wallets
 * projection's checkpoint as it stood at the start, so both sides cover the same events;
 * an account whose wallet moved on meanwhile is replayed on to where it shows.
 * With `owner`, that account's stream alone, a page of AUDIT_PAGE events at a time (cost:
 * its events; memory: a page and its state); otherwise every wallet event of the store
 * (cost: all events, one pass; memory: a page and one small state per account). Both also
 * hold the differences found. `onProgress` gets the position reached and the end; `page`
 * changes the events read at a time (tests: many pages over a short history).
 */
export async function auditLedger(
  store: EventStore,
  rc: Pick<ReadContext, 'reads'>,
  options: { owner?: string; onProgress?: (position: number, end: number) => void; page?: number } = {}
): Promise<LedgerAudit> {
  const pageSize = options.page ?? AUDIT_PAGE
  const through = await rc.reads.getCheckpoint('wallets')
  const replay = new Map<string, Replayed>()
  const found = new Map<string, string[]>()
  const differ = (user: string, text: string): void => {
    const list = found.get(user)
    if (list) list.push(`${user}: ${text}`)
    else found.set(user, [`${user}: ${text}`])
  }
  let transactions = 0
  const txs = rc.reads.collection<WalletTransactionDoc>(WALLET_TRANSACTIONS)

  const apply = async (e: RecordedEvent): Promise<void> => {
    const user = e.data.user_uuid as string
    const r = replay.get(user) ?? { state: initialState(), granted: 0, spent: 0, reserved: 0, transactions: 0, revision: -1 }
    const event = { type: e.type, data: e.data } as WalletEvent
    if (event.type === 'WalletBooksClosed') {
      for (const d of closingDiscrepancies(r.state, event)) differ(user, `revision ${e.revision}: ${d}`)
    } else {
      r.state = evolve(r.state, event)
      const tx = transactionOf(event)
      r.transactions++
      if (event.type === 'TokensGranted') r.granted += event.data.amount
      if (event.type === 'TokensCaptured') r.spent += event.data.amount
      r.reserved +=
        event.type === 'TokensReserved' ? event.data.amount : event.type === 'TokensCaptured' || event.type === 'TokensReleased' ? -event.data.amount : 0
      transactions++
      const shown = await txs.get(e.id)
      if (!shown) differ(user, `transaction ${e.id} (${tx.type} of ${tx.tokens} at ${e.metadata.occurred_at}) is not shown`)
      else {
        const want = {
          amount: tx.amount,
          transaction_type: tx.type,
          job_uuid: tx.job_uuid,
          occurred_at: e.metadata.occurred_at,
          balance_after: r.state.balance
        }
        for (const [k, v] of Object.entries(want))
          if (shown[k] !== v) differ(user, `transaction ${e.id} shows ${k} ${JSON.stringify(shown[k])}, the ledger makes ${JSON.stringify(v)}`)
      }
    }
    if (event.type === 'WalletBooksClosed') r.state = evolve(r.state, event)
    r.revision = e.revision
    replay.set(user, r)
  }

  if (options.owner !== undefined) {
    // The account's stream a page at a time (a million jobs make two million wallet events).
    for await (const e of streamFrom(store, `wallet-${options.owner}`, 0, pageSize)) {
      if (e.position > through) break
      await apply(e)
      if (e.revision % pageSize === pageSize - 1) options.onProgress?.(e.position, through)
    }
    options.onProgress?.(through, through)
  } else {
    for (let position = 0; position < through; ) {
      const page = await store.readAll({ from_position: position, max_count: pageSize })
      if (page.length === 0) break
      for (const e of page) if (e.position <= through && WALLET_TYPES.has(e.type)) await apply(e)
      position = page[page.length - 1].position
      options.onProgress?.(Math.min(position, through), through)
    }
  }

  const wallets = rc.reads.collection<WalletDoc & { erased?: boolean }>(WALLETS)
  const differences: string[] = []
  let accounts = 0
  for (const [user, r] of replay) {
    const shown = await wallets.get(user)
    // An erased account shows nothing: its ledger stays in the events, unreadable to the API.
    if (shown?.erased === true) continue
    accounts++
    if (shown && shown.transactions > r.transactions) {
      // The projector went on past `through` while the audit ran: this account's replay is
      // brought to where its wallet shows (the events after it in its own stream).
      for await (const e of streamFrom(store, `wallet-${user}`, r.revision + 1, pageSize)) {
        if (r.transactions >= shown.transactions) break
        await apply(e)
      }
    }
    const want = { balance: r.state.balance, reserved: r.reserved, spent: r.spent, granted: r.granted, transactions: r.transactions }
    if (!shown) differ(user, 'no wallet is shown')
    else for (const [k, v] of Object.entries(want)) if (shown[k] !== v) differ(user, `the wallet shows ${k} ${JSON.stringify(shown[k])}, the ledger makes ${v}`)
    differences.push(...(found.get(user) ?? []))
  }
  return { through, accounts, transactions, differences }
}

/** The events of `stream` from revision `from` on, read `pageSize` at a time (memory: one page). */
async function* streamFrom(store: EventStore, stream: string, from: number, pageSize: number): AsyncGenerator<RecordedEvent> {
  for (let revision = from; ; ) {
    const page = await store.readStream(stream, { from_revision: revision, max_count: pageSize })
    yield* page
    if (page.length < pageSize) return
    revision = page[page.length - 1].revision + 1
  }
}
