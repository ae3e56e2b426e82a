/** An event as produced by a decider: type and snake_case data (metadata is added on append). */
export interface Event<T extends string, D> { type: T, data: D }

/**
 * How a domain error reads to a caller; the HTTP layer maps it to a status
 * (invalid 400, unauthorized 401, payment_required 402, forbidden 403, not_found 404,
 * conflict 409, unprocessable 422, locked 429).
 */
export type ErrorKind = 'invalid' | 'unauthorized' | 'payment_required' | 'forbidden' | 'not_found' | 'conflict' | 'unprocessable' | 'locked'

/** A business rule violation with a machine code in the `<operation>.<reason>` form. */
export class DomainError extends Error {
  readonly code: string
  readonly kind: ErrorKind
  constructor (kind: ErrorKind, code: string, message: string) {
    super(message)
    this.name = 'DomainError'
    this.kind = kind
    this.code = code
  }
}
