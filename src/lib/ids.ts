import { v7 } from 'uuid'
import { randomBytesPooled } from './random.ts'

/** The last id's milliseconds and counter: ids made in one millisecond count up from a random start. */
const state = { msecs: Number.NEGATIVE_INFINITY, seq: 0 }

/**
 * A new UUIDv7 (RFC 9562 §5.7): 48 bits of Unix milliseconds, then a 31-bit counter that
 * starts at a random value each millisecond and counts up within it (RFC 9562 §6.2,
 * method 1; on overflow the milliseconds move on), then random bits; so ids made by one
 * process sort in the order they were made. Laid out by the `uuid` package (its own
 * `v7()` makes a system random call per id: this draws from a pool, `randomBytesPooled`).
 */
export function uuidv7(): string {
  const random = randomBytesPooled(16)
  const now = Date.now()
  if (now > state.msecs) {
    state.msecs = now
    state.seq = ((random[6] & 0x7f) << 24) | (random[7] << 16) | (random[8] << 8) | random[9]
  } else {
    state.seq = (state.seq + 1) | 0
    if (state.seq === 0) state.msecs++
  }
  return v7({ random, msecs: state.msecs, seq: state.seq })
}
