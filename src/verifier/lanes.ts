import type { RecipientAnswer } from './recipient-answer.ts'

/** A recipient waiting in a route's queue (`attempts`: how often a session took it and lost it). */
export interface Item {
  address: string
  attempts: number
  /** Not asked before this time (epoch ms): a greylisted recipient, until its window has passed. */
  due?: number
  /**
   * Not asked from this time on (epoch ms): the caller's greylisting deadline. A runner that
   * finds it passed answers it as expired (`expireItems`) rather than asking.
   */
  until?: number
  /**
   * A UTF-8 local part (RFC 6531): asked only of a server that offers SMTPUTF8, in an
   * envelope whose MAIL FROM declares it (§3.4).
   */
  eai?: true
}

/** A recipient for a route's queue; `eai` marked when its address is not ASCII. */
export function itemOf(address: string, due?: number, until?: number): Item {
  const item: Item = { address, attempts: 0, due }
  if (until !== undefined) item.until = until
  if (/[^\p{ASCII}]/u.test(address)) item.eai = true
  return item
}

/** Whether `item`'s `until` has passed at `now` (epoch ms): it is answered expired, not asked. */
export const isExpired = (item: Item, now: number): boolean => item.until !== undefined && item.until <= now

/**
 * Takes out of the front of `queue` the recipients whose `until` has passed, answering each
 * with `answer(address)`, up to the first one that may still be asked. Cost: the expired ones
 * and one more, never the whole queue: a call's recipients share one `until` and are queued
 * together, so they expire as a run; one further back is caught when a window takes it
 * (`isExpired`).
 */
export function expireFront(queue: Item[], answer: (address: string) => void, now = Date.now()): void {
  let n = 0
  while (n < queue.length && isExpired(queue[n], now)) n++
  for (const item of queue.splice(0, n)) answer(item.address)
}

/**
 * A route's lane: the queue of recipients shared by every caller probing the route now,
 * the callers waiting for each answer, the session runners working through the queue, and
 * the lingering ones waiting for more (see `ProbeOptions.linger_ms`).
 */
export interface Lane {
  queue: Item[]
  waiting: Map<string, Array<(a: RecipientAnswer) => void>>
  runners: number
  deadline: number
  /** Lingering sessions waiting for recipients (woken when some are queued). */
  wakers: Array<() => void>
}

/**
 * A lane's linger: resolves true as soon as recipients are queued (at once when some are
 * already), false after `ms` (milliseconds) without any.
 */
export function lingerIn(lane: Lane): (ms: number) => Promise<boolean> {
  return async ms => {
    if (lane.queue.length > 0) return true
    return await new Promise<boolean>(resolve => {
      const wake = (): void => {
        clearTimeout(timer)
        resolve(lane.queue.length > 0)
      }
      const timer = setTimeout(() => {
        const k = lane.wakers.indexOf(wake)
        if (k >= 0) lane.wakers.splice(k, 1)
        resolve(lane.queue.length > 0)
      }, ms)
      lane.wakers.push(wake)
    })
  }
}
