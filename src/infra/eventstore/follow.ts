import type { EventEmitter } from 'node:events'
import { turnIfDue } from '../../lib/turns.ts'
import type { RecordedEvent, SubscribeOptions, Subscription } from '../../ports/event-store.ts'

/** Bytes of event data a subscription's page holds at most (besides one event, whatever its size): four parts of a batch chunk, each read on the event loop's thread. */
const PAGE_BYTES = 1024 * 1024

/** What a store gives the loop that follows its log. */
export interface FollowedLog {
  /** Events after `from` in global order: at most `maxCount`, and no more once `maxBytes` characters of data were taken (one event at least). */
  page(from: number, maxCount: number, maxBytes: number): RecordedEvent[] | Promise<RecordedEvent[]>
  /** Position of the last stored event. */
  head(): number | Promise<number>
  /** Whether the store was closed (the loop ends). */
  closed(): boolean
  /** Emits `appended` after an append of this process, and when the store's poll sees another process's. */
  appended: EventEmitter
}

/**
 * The catch-up-then-live loop of `EventStore.subscribeToAll`, shared by the SQLite and
 * PostgreSQL stores: pages of `batchSize` events (and at most PAGE_BYTES of data) after the
 * position, one event at a time to the handler in global order (filtered by
 * `event_types`), `on_checkpoint` after each, `on_caught_up` once when a page leaves nothing
 * behind, then a wait for the next `appended`. A page after a page of large events gives the
 * event loop its turn first (`turnIfDue`). A handler error stops it and goes to `onError`.
 * `stop()` resolves once the handler is no longer running. Memory: one page.
 */
export function followLog(
  log: FollowedLog,
  batchSize: number,
  options: SubscribeOptions,
  handler: (event: RecordedEvent) => Promise<void> | void,
  onError?: (err: unknown) => void
): Subscription {
  let position = options.from_position
  let stopped = false
  let wake: (() => void) | null = null
  const types = options.event_types ? new Set(options.event_types) : null
  const onAppend = (): void => {
    if (wake) {
      const w = wake
      wake = null
      w()
    }
  }
  log.appended.on('appended', onAppend)
  const loop = async (): Promise<void> => {
    let caughtUpReported = false
    while (!stopped && !log.closed()) {
      const due = turnIfDue()
      if (due) await due
      const batch = await log.page(position, batchSize, PAGE_BYTES)
      for (const event of batch) {
        if (stopped || log.closed()) return
        if (types === null || types.has(event.type)) await handler(event)
        position = event.position
        options.on_checkpoint?.(position)
      }
      // Stopped or closed while the handler ran: nothing more is read or reported.
      if (stopped || log.closed()) return
      // A full page, by count or by bytes: more may follow at once.
      if (batch.length === batchSize || (batch.length > 0 && (await log.head()) > position)) continue
      if (!caughtUpReported) {
        caughtUpReported = true
        options.on_caught_up?.(position)
      }
      await new Promise<void>(resolve => {
        wake = resolve
        // Re-check: `stop` may have come while the handler ran (its wake-up found no waiter),
        // or an append may have landed between the read and setting `wake`.
        if (stopped || log.closed()) onAppend()
        else
          void Promise.resolve(log.head()).then(
            h => {
              if (h > position) onAppend()
            },
            () => onAppend()
          )
      })
    }
  }
  const done = loop()
    .catch(err => {
      if (!stopped && !log.closed())
        (
          onError ??
          ((e: unknown) => {
            console.error('subscription failed', e)
          })
        )(err)
    })
    .finally(() => {
      log.appended.off('appended', onAppend)
    })
  return {
    stop: async () => {
      stopped = true
      onAppend()
      await done
    }
  }
}
