import type { RecordedEvent } from '../ports/event-store.ts'
import type { AgentCreated, AgentRevoked } from '../domain/agent/events.ts'
import type { ApiKeyCreated, ApiKeyRevoked } from '../domain/api-key/events.ts'
import type { SessionStarted } from '../domain/session/events.ts'
import type { TwoFactorDisabled, TwoFactorEnabled, UserDeleted } from '../domain/user/events.ts'
import type { TokensGranted, TokensReleased, TokensReserved } from '../domain/wallet/events.ts'
import type { WebhookEndpointDisabled } from '../domain/webhook/events.ts'
import type { NotificationsSeen } from '../domain/notification/events.ts'
import type { PlanChanged, PlanEnded, PlanStarted } from '../domain/subscription/events.ts'
import type { BatchCompleted } from '../domain/batch/events.ts'
import type { Doc } from '../ports/read-store.ts'
import { alreadyApplied, collection, documentsProjection, erasing, type Projection, type Write } from '../eventsourcing/projection.ts'
import { openText, type ReadContext } from './read-context.ts'

export const NOTIFICATION_KINDS = [
  'webhook_disabled',
  'balance_low',
  'api_key_created',
  'api_key_revoked',
  'agent_created',
  'agent_revoked',
  'new_client_sign_in',
  'two_factor_enabled',
  'two_factor_disabled',
  'plan_started',
  'plan_changed',
  'plan_cancelling',
  'plan_ended',
  'batch_completed'
] as const
type NotificationKind = (typeof NOTIFICATION_KINDS)[number]

/** One entry of an account's feed (keyed by the event that caused it; `position` orders the feed). */
export interface NotificationDoc {
  [k: string]: unknown
  _id: string
  user_uuid: string
  position: number
  kind: NotificationKind
  message: string
  data: Record<string, unknown>
  created_at: string
}

/** What the feed needs to remember of an account: how far it was seen, its clients, its balance against the low mark. */
export interface NotificationStateDoc {
  [k: string]: unknown
  _id: string
  user_uuid: string
  seen_up_to: number
  /** Ids of the latest clients it signed in from (at most KNOWN_CLIENTS). */
  clients: string[]
  balance: number
  granted: number
  /** Whether `balance_low` was said since the balance last was above the mark. */
  low: boolean
  /** The account was erased: its later events make no entries. */
  erased: boolean
  /** Whether the paid plan is set to end at the period's end (said once). */
  cancelling?: boolean
}

/** Per account, newest first from a position (index user_uuid, position): a page reads `limit` entries. */
export const NOTIFICATIONS = collection({
  name: 'notifications',
  projection: 'notifications',
  fields: { user_uuid: 'text', position: 'number' },
  indexes: [['user_uuid', 'position']]
})
const NOTIFICATION_STATE = collection({ name: 'notification_state', projection: 'notifications', fields: {}, indexes: [] })

/** Clients remembered per account for "a sign-in from a new client". */
export const KNOWN_CLIENTS = 50
/** The balance is low below this share of the tokens ever granted (and below LOW_BALANCE_MIN tokens at least). */
const LOW_BALANCE_SHARE = 0.1
export const LOW_BALANCE_MIN = 10

type Handled =
  | WebhookEndpointDisabled
  | ApiKeyCreated
  | ApiKeyRevoked
  | AgentCreated
  | AgentRevoked
  | SessionStarted
  | TwoFactorEnabled
  | TwoFactorDisabled
  | TokensGranted
  | TokensReserved
  | TokensReleased
  | NotificationsSeen
  | UserDeleted
  | PlanStarted
  | PlanChanged
  | PlanEnded
  | BatchCompleted

const lowMark = (granted: number): number => Math.max(LOW_BALANCE_MIN, Math.floor(granted * LOW_BALANCE_SHARE))

/**
 * The sentence of an entry that names a key or an agent: with its name when the name is in
 * the clear (events written before names were sealed), without it when sealed (the feed's
 * query opens `data.name` and says it then: read models keep a customer's text sealed).
 */
function named(kind: 'api_key_created' | 'agent_created', name: string): string {
  const what = kind === 'api_key_created' ? 'API key' : 'Agent'
  return name.startsWith('sealed:') ? `${what} was created` : `${what} "${name}" was created`
}

/** An entry as the feed shows it: a sealed name opened, and said in its sentence. */
async function opened(rc: ReadContext, doc: NotificationDoc): Promise<NotificationDoc> {
  const name = doc.data.name
  if ((doc.kind !== 'api_key_created' && doc.kind !== 'agent_created') || typeof name !== 'string' || !name.startsWith('sealed:')) return doc
  const open = (await openText(rc, doc.user_uuid, name)) ?? ''
  return { ...doc, message: named(doc.kind, open), data: { ...doc.data, name: open } }
}

/** What an entry says. */
export interface NotificationEntry {
  kind: NotificationKind
  message: string
  data: Record<string, unknown>
}

/** The entry an event makes, if any, and the state after it (a pure function of both). */
export function notify(state: NotificationStateDoc, event: RecordedEvent): { state: NotificationStateDoc; entry: NotificationEntry | null } {
  const e = event as unknown as Handled
  switch (e.type) {
    case 'WebhookEndpointDisabled':
      return {
        state,
        entry: {
          kind: 'webhook_disabled',
          message:
            e.data.reason === 'consecutive_failures'
              ? `A webhook endpoint was disabled after ${e.data.consecutive_failures} failed deliveries in a row`
              : 'A webhook endpoint was disabled',
          data: { webhook_uuid: e.data.webhook_uuid, reason: e.data.reason }
        }
      }
    case 'ApiKeyCreated':
      return {
        state,
        entry: {
          kind: 'api_key_created',
          message: named('api_key_created', e.data.name),
          data: { key_uuid: e.data.key_uuid, name: e.data.name, environment: e.data.environment }
        }
      }
    case 'ApiKeyRevoked':
      return { state, entry: { kind: 'api_key_revoked', message: 'An API key was revoked', data: { key_uuid: e.data.key_uuid, reason: e.data.reason } } }
    case 'AgentCreated':
      return {
        state,
        entry: { kind: 'agent_created', message: named('agent_created', e.data.name), data: { agent_uuid: e.data.agent_uuid, name: e.data.name } }
      }
    case 'AgentRevoked':
      return { state, entry: { kind: 'agent_revoked', message: 'An agent was revoked', data: { agent_uuid: e.data.agent_uuid, reason: e.data.reason } } }
    case 'TwoFactorEnabled':
      return { state, entry: { kind: 'two_factor_enabled', message: 'Two-factor authentication was turned on', data: {} } }
    case 'TwoFactorDisabled':
      return { state, entry: { kind: 'two_factor_disabled', message: 'Two-factor authentication was turned off', data: {} } }
    case 'SessionStarted': {
      const client = e.data.client
      if (!client || state.clients.includes(client.id)) return { state, entry: null }
      const first = state.clients.length === 0
      const next = { ...state, clients: [...state.clients, client.id].slice(-KNOWN_CLIENTS) }
      // The very first client of an account is not news.
      return {
        state: next,
        entry: first
          ? null
          : {
              kind: 'new_client_sign_in',
              message: `A sign-in from a new client: ${client.label}`,
              data: { session_uuid: e.data.session_uuid, client: client.label, method: e.data.method }
            }
      }
    }
    case 'TokensGranted':
    case 'TokensReserved':
    case 'TokensReleased': {
      const balance = state.balance + (e.type === 'TokensReserved' ? -e.data.amount : e.data.amount)
      const granted = state.granted + (e.type === 'TokensGranted' ? e.data.amount : 0)
      const mark = lowMark(granted)
      if (balance >= mark) return { state: { ...state, balance, granted, low: false }, entry: null }
      if (state.low || e.type !== 'TokensReserved') return { state: { ...state, balance, granted }, entry: null }
      return {
        state: { ...state, balance, granted, low: true },
        entry: { kind: 'balance_low', message: `The balance is low: ${balance} tokens left`, data: { balance, threshold: mark } }
      }
    }
    case 'PlanStarted':
      return {
        state,
        entry: {
          kind: 'plan_started',
          message: `The ${e.data.subscription.plan} plan started`,
          data: { plan: e.data.subscription.plan, cycle: e.data.subscription.cycle }
        }
      }
    case 'PlanChanged': {
      const s = e.data.subscription
      if (s.plan !== e.data.previous_plan)
        return {
          state,
          entry: {
            kind: 'plan_changed',
            message: `The plan changed from ${e.data.previous_plan} to ${s.plan}`,
            data: { plan: s.plan, previous_plan: e.data.previous_plan, cycle: s.cycle }
          }
        }
      if (s.cancel_at_period_end && !state.cancelling)
        return {
          state: { ...state, cancelling: true },
          entry: {
            kind: 'plan_cancelling',
            message: `The ${s.plan} plan ends at the end of the period`,
            data: { plan: s.plan, current_period_end: s.current_period_end }
          }
        }
      return { state: { ...state, cancelling: s.cancel_at_period_end }, entry: null }
    }
    case 'PlanEnded':
      return {
        state: { ...state, cancelling: false },
        entry: { kind: 'plan_ended', message: `The ${e.data.previous_plan} plan ended: the account is on Free`, data: { previous_plan: e.data.previous_plan } }
      }
    case 'NotificationsSeen':
      return { state: { ...state, seen_up_to: Math.max(state.seen_up_to, e.data.up_to) }, entry: null }
    case 'UserDeleted':
      return { state: { ...state, clients: [], erased: true }, entry: null }
    case 'BatchCompleted':
      return {
        state,
        entry: {
          kind: 'batch_completed',
          message: `A batch of ${e.data.total} addresses is completed`,
          data: { batch_uuid: e.data.batch_uuid, total: e.data.total }
        }
      }
  }
}

const emptyState = (user: string): NotificationStateDoc => ({
  _id: user,
  user_uuid: user,
  seen_up_to: 0,
  clients: [],
  balance: 0,
  granted: 0,
  low: false,
  erased: false,
  cancelling: false
})

/**
 * The feed's fold (pure): from the account's state, the writes of one event — its entry
 * (keyed by event id), if it makes one, and the state after it. An erased account's events
 * make nothing; so does an event at or below the state's `position` (a second delivery).
 */
function evolveNotifications(docs: ReadonlyArray<Doc | null>, event: RecordedEvent): Write[] {
  const user = event.data.user_uuid as string
  const state = (docs[0] as NotificationStateDoc | null) ?? emptyState(user)
  if (state.erased || alreadyApplied(docs[0], event)) return []
  const { state: next, entry } = notify(state, event)
  return [
    ...(event.type === 'UserDeleted' ? erasing([NOTIFICATIONS], user) : []),
    ...(entry
      ? [{ put: NOTIFICATIONS, doc: { _id: event.id, user_uuid: user, position: event.position, created_at: event.metadata.occurred_at, ...entry } }]
      : []),
    { put: NOTIFICATION_STATE, doc: { ...next, position: event.position } }
  ]
}

/**
 * The account feed (interface "Notifications"): an endpoint disabled, the balance low, a
 * key or agent created or revoked, a sign-in from a new client, two-factor turned on or
 * off, a plan started, changed, set to end or ended, a batch completed. An erased account's feed is deleted and its later events make no entries.
 */
export const notificationsProjection: Projection = documentsProjection({
  // Plan events joined in version 1, batches in 1 too: none existed before them, so no document changes meaning.
  // 2: the state keeps the position of its last event (a second delivery changes nothing).
  version: 2,
  collections: [NOTIFICATIONS, NOTIFICATION_STATE],
  event_types: [
    'WebhookEndpointDisabled',
    'ApiKeyCreated',
    'ApiKeyRevoked',
    'AgentCreated',
    'AgentRevoked',
    'SessionStarted',
    'TwoFactorEnabled',
    'TwoFactorDisabled',
    'TokensGranted',
    'TokensReserved',
    'TokensReleased',
    'NotificationsSeen',
    'UserDeleted',
    'PlanStarted',
    'PlanChanged',
    'PlanEnded',
    'BatchCompleted'
  ],
  reads: event => [[NOTIFICATION_STATE, event.data.user_uuid as string]],
  evolve: evolveNotifications
})

/**
 * A page of the feed, newest first, before position `before` (exclusive; from the newest
 * when null), whether an older page follows, and how far it was seen. Cost: one index
 * range (user_uuid, position) of `limit + 1` entries and one document.
 */
export async function feed(
  rc: ReadContext,
  owner: string,
  before: number | null,
  limit: number
): Promise<{ items: NotificationDoc[]; more: boolean; seen_up_to: number }> {
  const [items, state] = await Promise.all([
    rc.reads
      .collection<NotificationDoc>(NOTIFICATIONS)
      .find({ where: { user_uuid: owner, ...(before !== null && { position: { lte: before - 1 } }) }, sort: [['position', -1]], limit: limit + 1 }),
    rc.reads.collection<NotificationStateDoc>(NOTIFICATION_STATE).get(owner)
  ])
  return { items: await Promise.all(items.slice(0, limit).map(async d => await opened(rc, d))), more: items.length > limit, seen_up_to: state?.seen_up_to ?? 0 }
}

/** The entry of `owner`'s feed at `position`, if there is one (index user_uuid, position). */
export async function feedEntryAt(rc: Pick<ReadContext, 'reads'>, owner: string, position: number): Promise<NotificationDoc | null> {
  const [doc] = await rc.reads.collection<NotificationDoc>(NOTIFICATIONS).find({ where: { user_uuid: owner, position }, limit: 1 })
  return doc ?? null
}
