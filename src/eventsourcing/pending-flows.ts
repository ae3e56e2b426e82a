import type { EventStore } from '../ports/event-store.ts'
import type { HeldDeliveries, HeldDelivery } from '../ports/held-deliveries.ts'

/** A flow as the audit sees it: its name, the events that start it, its stated bound (ms). */
export interface FlowBound {
  name: string
  triggers: readonly string[]
  bound_ms: number
}

/** Something begun and not finished: a flow's trigger not yet delivered, or a delivery held or given up. */
export interface PendingItem {
  /** The flow, or the bus consumer that holds the delivery. */
  owner: string
  /** `undelivered`: committed after the relay's checkpoint; `held`: waiting for its due time; `dead`: given up, kept to be seen. */
  state: 'undelivered' | 'held' | 'dead'
  event_type: string
  event_id: string
  stream: string
  /** Seconds since the event was committed (undelivered) or since the delivery was last held (due time passed: negative means not due yet). */
  age_s: number
  /** For a flow, whether it is older than its bound; for a dead letter, always. */
  over_bound: boolean
  last_error: string | null
}

/**
 * What is begun and not finished: the trigger events of
 * `flows` committed after the relay's checkpoint (`relay`: nobody has been handed them
 * yet), and the deliveries a bus keeps waiting or gave up (`holds`: the embedded default's
 * table). Cost: the events after the relay's checkpoint (its lag; at most `limit`, then
 * `truncated`) and the held rows. A flow's reaction that ran inline shows as undelivered
 * until the relay passes it (milliseconds): "not confirmed finished", never "lost".
 */
export async function pendingFlows(
  store: EventStore,
  relayCheckpoint: number,
  holds: HeldDeliveries | null,
  flows: readonly FlowBound[],
  consumers: readonly string[],
  now: Date,
  limit = 10_000
): Promise<{ items: PendingItem[]; truncated: boolean }> {
  const items: PendingItem[] = []
  const byTrigger = new Map<string, FlowBound[]>()
  for (const f of flows) for (const t of f.triggers) byTrigger.set(t, [...(byTrigger.get(t) ?? []), f])
  let from = relayCheckpoint
  let read = 0
  let truncated = false
  for (;;) {
    const page = await store.readAll({ from_position: from, max_count: 1_000 })
    if (page.length === 0) break
    for (const e of page) {
      for (const f of byTrigger.get(e.type) ?? []) {
        const age = (now.getTime() - Date.parse(e.metadata.occurred_at)) / 1000
        items.push({
          owner: f.name,
          state: 'undelivered',
          event_type: e.type,
          event_id: e.id,
          stream: e.stream,
          age_s: Math.round(age),
          over_bound: age * 1000 > f.bound_ms,
          last_error: null
        })
      }
    }
    from = page[page.length - 1].position
    read += page.length
    if (read >= limit) {
      truncated = true
      break
    }
  }
  if (holds !== null) {
    for (const consumer of consumers) {
      for (const state of ['waiting', 'dead'] as const) {
        for (const h of await holds.heldDeliveries(consumer, state)) items.push(heldItem(h, now))
      }
    }
  }
  return { items, truncated }
}

const heldItem = (h: HeldDelivery, now: Date): PendingItem => ({
  owner: h.consumer,
  state: h.state === 'dead' ? 'dead' : 'held',
  event_type: h.type,
  event_id: h.event_id,
  stream: h.stream,
  age_s: Math.round((now.getTime() - Date.parse(h.due_at)) / 1000),
  over_bound: h.state === 'dead',
  last_error: h.last_error
})

/**
 * `items` as one line per flow (the metrics): how many reactions are pending and the age
 * of the oldest (s, never negative). A delivery held by the flow worker's consumer
 * (`consumer`) counts for every flow its event type starts.
 */
export function pendingByFlow(
  items: readonly PendingItem[],
  flows: readonly FlowBound[],
  consumer: string
): Array<{ flow: string; pending: number; oldest_s: number }> {
  const byFlow = new Map<string, { flow: string; pending: number; oldest_s: number }>()
  const count = (flow: string, age: number): void => {
    const f = byFlow.get(flow) ?? { flow, pending: 0, oldest_s: 0 }
    f.pending++
    f.oldest_s = Math.max(f.oldest_s, age)
    byFlow.set(flow, f)
  }
  for (const i of items) {
    const age = Math.max(0, i.age_s)
    if (i.owner === consumer) for (const f of flows) f.triggers.includes(i.event_type) && count(f.name, age)
    else if (flows.some(f => f.name === i.owner)) count(i.owner, age)
  }
  return [...byFlow.values()]
}
