// The service on PostgreSQL (DATABASE_URL): events, read models and kept files in the local
// server, nothing of them in DATA_DIR; an account signs up, a test key verifies an address in
// the sandbox, and after a restart on the same database the API shows the same job and
// balance. The oracles: the API read back, and the database's own tables counted with a
// client of this test.
import t from 'tap'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { client, settled, signUp, startTestService, testConfig } from '../support/service.ts'
import { requirePostgres, testDatabase } from '../support/postgres.ts'

if (await requirePostgres(t)) {
  t.test('sign up, verify, restart: the same job and wallet, all of it in PostgreSQL', async t => {
    const url = await testDatabase(t, 'service')
    const dataDir = t.testdir()
    const config = testConfig(dataDir, { DATABASE_URL: url, DATABASE_POOL_SIZE: '4' })
    let service = await startTestService(config)
    let api = client(service.url)
    const token = await signUp(api, dataDir, 'pg-user@example.com')
    const key = (await api('POST', '/api/keys', { token, body: { name: 'pg', environment: 'test' } })).body.raw_key as string
    const submitted = await api('POST', '/api/verify', { token: key, body: { email: 'someone@example.com' } })
    t.equal(submitted.status, 202, 'a test key submits')
    const job = await settled(api, key, submitted.body.uuid)
    t.equal(job.status, 'completed', 'and its job completes in the sandbox')
    const wallet = (await api('GET', '/api/wallet', { token })).body
    await service.close()

    const db = new pg.Client({ connectionString: url })
    await db.connect()
    t.teardown(() => db.end())
    const count = async (sql: string): Promise<number> => Number((await db.query<{ n: string }>(sql)).rows[0].n)
    t.ok((await count("SELECT count(*) AS n FROM events WHERE stream LIKE 'user-%'")) >= 2, "the account's events are in PostgreSQL")
    t.ok((await count(`SELECT count(*) AS n FROM events WHERE stream = 'job-${submitted.body.uuid}'`)) >= 1, "and the job's")
    t.ok((await count('SELECT count(*) AS n FROM projection_generations')) > 5, 'the read models live there too')
    t.notOk(existsSync(join(dataDir, 'events.db')), 'no SQLite event store in DATA_DIR')
    t.notOk(existsSync(join(dataDir, 'reads.db')), 'no SQLite read store in DATA_DIR')

    service = await startTestService(config)
    t.teardown(() => service.close())
    api = client(service.url)
    t.match(
      (await api('GET', `/api/verify/${submitted.body.uuid}`, { token: key })).body,
      { status: 'completed', verdict: job.verdict },
      'after a restart, the same job'
    )
    t.same((await api('GET', '/api/wallet', { token })).body, wallet, 'and the same wallet')
  })
}
