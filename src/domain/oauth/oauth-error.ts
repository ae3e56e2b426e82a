/** An OAuth error as RFC 6749 §5.2 / RFC 7591 §3.2.2 name it, with its HTTP status. */
export class OAuthError extends Error {
  readonly error: string
  readonly status: number
  /** The global position of what the refusal itself wrote (a replayed code's grant revoked): its answer waits for the read models to have it. */
  readonly position: number | null
  constructor(error: string, description: string, status = 400, position: number | null = null) {
    super(description)
    this.error = error
    this.status = status
    this.position = position
  }
}

export const LOOPBACK = new Set(['127.0.0.1', '[::1]'])
