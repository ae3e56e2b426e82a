/**
 * A store could not be reached (its server stopped, restarting, failing over, or out of
 * connections): what the request needed was not read, or not written. Adapters raise it for
 * connection failures only, never for a refused write or a bad query. The API answers it
 * 503 `store.unreachable` with `Retry-After`; the loops that follow the store (projections,
 * relay, workers) retry, and `/readyz` says the store is unreachable until a query succeeds.
 *
 * A write whose connection was lost while it committed may have been made: the operations
 * that matter are idempotent (`Idempotency-Key`, event ids), so a retry is safe.
 */
export class StoreUnavailableError extends Error {
  /** Which store (`postgresql`, …). */
  readonly store: string
  constructor(store: string, message: string, options?: { cause?: unknown }) {
    super(`${store}: ${message}`, options)
    this.name = 'StoreUnavailableError'
    this.store = store
  }
}

/** A store's reachability as its last queries found it (for `/readyz` and `/metrics`). */
export interface StoreHealth {
  /** Which store (`postgresql`). */
  readonly store: string
  /** null while the last query reached the server; else since when (ms since the epoch) and why it does not answer. */
  readonly unreachable: { since: number; detail: string } | null
}
