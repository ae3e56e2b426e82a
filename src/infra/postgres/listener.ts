import pg from 'pg'

/**
 * A LISTEN connection to `channel`, held open outside the pool until `stop`: each
 * notification calls `onNotify`, and so does each (re)connection, since what was notified
 * while no connection listened is lost. A failed or lost connection is opened again a second
 * later. `listening` says whether one is open now (callers poll while it is not). Memory:
 * one connection.
 */
export class Listener {
  private client: pg.Client | null = null
  private stopped = false
  private stopNow: () => void = () => {}
  private readonly stopping = new Promise<void>(resolve => {
    this.stopNow = resolve
  })

  constructor(options: pg.ClientConfig, channel: string, onNotify: () => void) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`channel ${channel}: a lower-case SQL identifier`)
    void this.run(options, channel, onNotify)
  }

  /** Whether a LISTEN connection is open now. */
  get listening(): boolean {
    return this.client !== null
  }

  private async run(options: pg.ClientConfig, channel: string, onNotify: () => void): Promise<void> {
    while (!this.stopped) {
      const client = new pg.Client({ ...options, keepAlive: true })
      const ended = new Promise<void>(resolve => {
        client.once('error', () => resolve())
        client.once('end', () => resolve())
      })
      try {
        await client.connect()
        client.on('notification', () => onNotify())
        await client.query(`LISTEN ${channel}`)
        this.client = client
        onNotify()
        await Promise.race([ended, this.stopping])
      } catch {
        // Not reachable now: the caller polls meanwhile, and the next attempt is in a second.
      } finally {
        this.client = null
        await client.end().catch(() => {})
      }
      if (!this.stopped) await new Promise(resolve => setTimeout(resolve, 1_000).unref())
    }
  }

  /** Ends the connection and the loop. */
  stop(): void {
    this.stopped = true
    this.stopNow()
  }
}
