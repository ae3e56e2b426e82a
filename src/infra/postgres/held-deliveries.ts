import type { HeldDeliveries, HeldDelivery } from '../../ports/held-deliveries.ts'
import type { StorePool } from './pool.ts'
import { migrated } from './schema.ts'

/**
 * The in-process bus's held deliveries on PostgreSQL (table `held_deliveries`, migration 4):
 * deliveries asked for again later and dead letters, found again after a restart. Due
 * times are RFC 3339 text compared byte-wise (`COLLATE "C"`), as SQLite compares them. Cost:
 * one statement each; a consumer's list by the (consumer, state, due_at) index, bounded by
 * what is held, never by the log.
 */
export class PostgresHeldDeliveries implements HeldDeliveries {
  private readonly pool: StorePool
  private readonly schema: string

  constructor(pool: StorePool, schema = 'public') {
    this.pool = pool
    this.schema = schema
  }

  private async ready(): Promise<void> {
    await migrated(this.pool, this.schema)
  }

  /** Keeps (or replaces) a held delivery of the in-process bus (table `held_deliveries`). */
  async holdDelivery(h: HeldDelivery): Promise<void> {
    await this.ready()
    await this.pool.query(
      `INSERT INTO held_deliveries (consumer, event_id, stream, revision, type, due_at, attempts, state, last_error)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (consumer, event_id) DO UPDATE SET due_at = excluded.due_at, attempts = excluded.attempts, state = excluded.state, last_error = excluded.last_error`,
      [h.consumer, h.event_id, h.stream, h.revision, h.type, h.due_at, h.attempts, h.state, h.last_error]
    )
  }

  async releaseDelivery(consumer: string, eventId: string): Promise<void> {
    await this.ready()
    await this.pool.query('DELETE FROM held_deliveries WHERE consumer = $1 AND event_id = $2', [consumer, eventId])
  }

  /** What `consumer` has waiting in `state`, soonest first (RFC 3339 text, compared byte-wise). Cost: what is held, by index. */
  async heldDeliveries(consumer: string, state: HeldDelivery['state']): Promise<HeldDelivery[]> {
    await this.ready()
    const r = await this.pool.query<HeldDelivery>(
      'SELECT consumer, event_id, stream, revision, type, due_at, attempts, state, last_error FROM held_deliveries WHERE consumer = $1 AND state = $2 ORDER BY due_at COLLATE "C"',
      [consumer, state]
    )
    return r.rows
  }

  async heldSummary(): Promise<Array<{ consumer: string; state: HeldDelivery['state']; count: number; oldest_due_at: string }>> {
    await this.ready()
    const r = await this.pool.query<{ consumer: string; state: HeldDelivery['state']; count: string; oldest_due_at: string }>(
      'SELECT consumer, state, count(*) AS count, min(due_at COLLATE "C") AS oldest_due_at FROM held_deliveries GROUP BY consumer, state'
    )
    return r.rows.map(row => ({ ...row, count: Number(row.count) }))
  }
}
