/** An OAuth error as RFC 6749 §5.2 / RFC 7591 §3.2.2 name it, with its HTTP status. */
export class OAuthError extends Error {
  readonly error: string
  readonly status: number
  constructor(error: string, description: string, status = 400) {
    super(description)
    this.error = error
    this.status = status
  }
}

export const LOOPBACK = new Set(['127.0.0.1', '[::1]'])
