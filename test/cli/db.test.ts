// `svc db migrate` on a database of the test's own: four run at once on an empty database
// (as processes starting together would), and each migration is applied exactly once; a run
// after them applies nothing; without DATABASE_URL it is a usage error. The oracles: the
// server's own catalog and `schema_migrations` table, read with a client of this test.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import pg from 'pg'
import { requirePostgres, testDatabase } from '../support/postgres.ts'
import { svcEnv } from '../support/processes.ts'

const run = promisify(execFile)
const cli = new URL('../../src/cli.ts', import.meta.url).pathname

if (await requirePostgres(t)) {
  t.test('four at once: each migration once; again: nothing to do', async t => {
    const url = await testDatabase(t, 'migrate')
    const env = svcEnv(t.testdir(), { DATABASE_URL: url })
    const runs = await Promise.all(Array.from({ length: 4 }, () => run(process.execPath, [cli, 'db', 'migrate'], { env })))
    const outs = runs.map(r => JSON.parse(r.stdout) as { applied: number[]; version: number })
    const applied = outs.flatMap(o => o.applied).sort((a, b) => a - b)
    const db = new pg.Client({ connectionString: url })
    await db.connect()
    t.teardown(() => db.end())
    const recorded = (await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map(r => r.version)
    t.ok(recorded.length >= 3, `${recorded.length} migrations recorded`)
    t.same(applied, recorded, 'the four runs together applied each recorded migration exactly once')
    t.ok(
      outs.every(o => o.version === recorded[recorded.length - 1]),
      'each says the last version'
    )
    const tables = (await db.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")).rows.map(
      r => r.table_name
    )
    for (const table of ['events', 'checkpoints', 'projection_generations', 'projector_lease', 'blobs', 'blob_chunks'])
      t.ok(tables.includes(table), `table ${table} made`)
    const again = JSON.parse((await run(process.execPath, [cli, 'db', 'migrate'], { env })).stdout)
    t.same(again.applied, [], 'a run on an up-to-date schema applies nothing')
    // svc doctor exits 1 where egress fails (no port 25 here): its report is read either way.
    const doctor = await run(process.execPath, [cli, 'doctor'], { env: { ...env, DATABASE_POOL_SIZE: '3' } }).catch((e: { stdout: string }) => e)
    t.match(
      JSON.parse(doctor.stdout).stores.database,
      { kind: 'postgresql', ok: true, pool_size: 3, schema_version: recorded[recorded.length - 1], server_version: /^\d+/ },
      'svc doctor reports the database: its pool, the server and the schema version'
    )
  })

  t.test('without DATABASE_URL: a usage error, exit 2', async t => {
    const { DATABASE_URL: _unset, ...env } = svcEnv(t.testdir())
    const err = await run(process.execPath, [cli, 'db', 'migrate'], { env }).catch((e: { code: number; stderr: string }) => e)
    t.match(err, { code: 2, stderr: /DATABASE_URL is not set/ })
  })
}
