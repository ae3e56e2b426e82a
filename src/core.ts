// The stores, as every process opens them (the service's roles and the operator commands):
// the event store, the read store, the data keys and the secrets, with the command context
// over them. Kept apart from main.ts so that an operator command (`svc accounts show`,
// `svc ledger audit`…) loads the stores alone, not the HTTP app, the workers and the engine.
import { makePrivateDir } from './infra/private-files.ts'
import { join } from 'node:path'
import type { Config } from './config.ts'
import { optionalAdapter } from './infra/optional-adapter.ts'
import { SqliteEventStore } from './infra/eventstore/sqlite.ts'
import type { EventStore } from './ports/event-store.ts'
import type { StoreHealth } from './ports/store-unavailable.ts'
import type { HeldDeliveries } from './ports/held-deliveries.ts'
import type { StorePool } from './infra/postgres/pool.ts'
import { SqliteReadStore } from './infra/readstore/sqlite.ts'
import type { CheckpointStore } from './eventsourcing/relay.ts'
import { SqliteDataKeyStore } from './infra/crypto/keystore.ts'
import { LibsodiumSealer } from './infra/crypto/sealer.ts'
import { loadSecrets } from './infra/crypto/secrets.ts'
import { defaultClockAndIds, type CommandContext } from './commands/context.ts'

export interface Core {
  ctx: CommandContext
  store: EventStore
  /**
   * Where the relay keeps its position, never in the event log: the SQLite event store's
   * own table on the embedded default, the read store (MongoDB's `consumer_checkpoints`)
   * beside EventStoreDB.
   */
  checkpoints: CheckpointStore
  keys: SqliteDataKeyStore
  /**
   * Where the in-process bus keeps deliveries that wait (a restart finds them): the SQLite or
   * PostgreSQL event store; null beside KurrentDB (that topology runs NATS, which keeps its own).
   */
  holds: HeldDeliveries | null
  /** With DATABASE_URL: the one pool of the process's PostgreSQL stores (events, read models, kept files), at most `DATABASE_POOL_SIZE` connections. */
  database: StorePool | null
  /** The stores whose reachability `/readyz` reports (PostgreSQL's pool; none on the embedded default). */
  health: StoreHealth[]
  close(): Promise<void>
}

/**
 * Opens the stores: the event store (SQLite `DATA_DIR/events.db`, PostgreSQL with
 * DATABASE_URL, or EventStoreDB), the read store (SQLite `DATA_DIR/reads.db`, PostgreSQL, or MongoDB), the data key store
 * (`DATA_DIR/keys.db`) and the secrets. Used by the service and by operator commands.
 */
export async function openCore(config: Config, options: { now?: () => Date } = {}): Promise<Core> {
  // DATA_DIR holds customers' data and the secrets: made 0700, every file in it 0600.
  makePrivateDir(config.data_dir)
  const secrets = await loadSecrets(config.data_dir)
  // The KurrentDB and MongoDB adapters load their clients only where configured: optional
  // dependencies (KurrentDB's weighs about 33 MiB, MongoDB's 7), never run by the tests here.
  const pg = config.database
  const database = pg ? new (await import('./infra/postgres/pool.ts')).StorePool(pg.url, { max: pg.pool_size, schema: 'public' }) : null
  const store = pg
    ? new (await import('./infra/eventstore/postgres.ts')).PostgresEventStore(pg.url, { pool: database! })
    : config.eventstore_url
      ? new (await optionalAdapter('EVENTSTORE_URL', '@kurrent/kurrentdb-client', () => import('./infra/eventstore/kurrentdb.ts'))).KurrentEventStore(
          config.eventstore_url
        )
      : new SqliteEventStore(join(config.data_dir, 'events.db'))
  const reads = pg
    ? new (await import('./infra/readstore/postgres.ts')).PostgresReadStore(pg.url, { pool: database! })
    : config.mongodb_url
      ? await (await optionalAdapter('MONGODB_URL', 'mongodb', () => import('./infra/readstore/mongodb.ts'))).MongoReadStore.connect(config.mongodb_url)
      : new SqliteReadStore(join(config.data_dir, 'reads.db'))
  const keys = new SqliteDataKeyStore(join(config.data_dir, 'keys.db'), secrets.master_key)
  const configured = (config.public_url ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`).replace(/\/$/, '')
  const ctx: CommandContext = {
    store,
    reads,
    sealer: new LibsodiumSealer(keys),
    secrets,
    config,
    ...defaultClockAndIds(),
    ...(options.now && { now: options.now }),
    base_url: () => configured
  }
  const checkpoints: CheckpointStore =
    store instanceof SqliteEventStore
      ? store
      : { getCheckpoint: name => reads.getConsumerCheckpoint(name), setCheckpoint: (name, position) => reads.setConsumerCheckpoint(name, position) }
  return {
    ctx,
    store,
    checkpoints,
    keys,
    holds:
      store instanceof SqliteEventStore ? store : database ? new (await import('./infra/postgres/held-deliveries.ts')).PostgresHeldDeliveries(database) : null,
    database,
    health: database ? [database] : [],
    close: async () => {
      await store.close()
      await ctx.reads.close()
      await keys.close()
      await database?.end()
    }
  }
}
