import { z } from 'zod'
import { parseWith } from './problem.ts'

/** Interface section 8: `limit` defaults to 20 and is capped at 96; `offset` defaults to 0. */
export const DEFAULT_LIMIT = 20
export const MAX_LIMIT = 96

const integer = (min: number, maxDigits: number) => z.string().regex(new RegExp(`^\\d{1,${maxDigits}}$`), maxDigits > 9 ? 'must be a non-negative integer' : `must be a non-negative integer of at most ${maxDigits} digits`)
  .transform(v => Math.min(Number(v), 1e9))
  .pipe(z.number().int().min(min))

// A huge `limit` is lowered to the cap; an `offset` past 10^9 is refused (no store skips that far).
const PageQuery = z.object({
  limit: integer(1, 400).optional(),
  offset: integer(0, 9).optional()
}).loose()

export interface Page { limit: number, offset: number }

/**
 * Reads `limit` and `offset` from a query string object (interface section 8): `limit`
 * defaults to 20 and values above 96 are lowered to 96; `offset` defaults to 0.
 * @throws HttpProblem 400 `request.invalid_pagination` for a non-integer, a `limit` below 1,
 *   a negative `offset` or one of more than 9 digits.
 */
export function parsePage (query: unknown): Page {
  const q = parseWith(PageQuery, query ?? {}, 'request.invalid_pagination')
  return { limit: Math.min(q.limit ?? DEFAULT_LIMIT, MAX_LIMIT), offset: q.offset ?? 0 }
}

/** The paginated list shape of ARCHITECTURE.md: `{ items, total, limit, offset }`. */
export function paginated<T> (items: T[], total: number, page: Page): { items: T[], total: number, limit: number, offset: number } {
  return { items, total, limit: page.limit, offset: page.offset }
}
