import t, { type Test } from 'tap'
import { closeSync, lstatSync, mkdirSync, openSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { client, signUp, startTestService, testConfig, type Api } from '../support/service.ts'
import { npmStartNodeFlags, startSvc, svcEnv } from '../support/processes.ts'
import { waitUntil } from '../support/eventstore-contract.ts'

// Customer data at rest is the service's user's alone (issue 42, item 12d): every file under
// DATA_DIR — the SQLite event store, read store and data keys with their -wal and -shm
// (made by SQLite itself), the secrets and JWT keys, the outbox's mails, kept list files —
// is 0600 and every directory 0700. The service runs as `npm start` runs it; the test signs
// up (a mail in the outbox) and keeps a file beside a batch, then reads every mode back
// from the file system. A second service, in this process under umask 022, shows the
// stores make their files private themselves (not only through the role's umask).

/** Every entry under `dir` (itself included) with its permission bits, as `relative path → mode`. */
function modes(dir: string): Map<string, { mode: number; directory: boolean }> {
  const out = new Map<string, { mode: number; directory: boolean }>()
  const walk = (path: string): void => {
    const s = lstatSync(path)
    out.set(relative(dir, path) || '.', { mode: s.mode & 0o777, directory: s.isDirectory() })
    if (s.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name))
  }
  walk(dir)
  return out
}

/** A sign-up (its confirmation mail filed in the outbox) and a test batch with its list file kept. */
async function signUpAndKeepAFile(api: Api, dataDir: string, email: string): Promise<void> {
  const token = await signUp(api, dataDir, email)
  const key = (await api('POST', '/api/keys', { token, body: { name: 'test', environment: 'test' } })).body.raw_key as string
  const batch = await api('POST', '/api/batches', { token: key, body: { emails: ['valid@example.com', 'invalid@example.com'], final: true, name: 'crm.csv' } })
  if (batch.status !== 202) throw new Error(`batch: ${batch.status} ${JSON.stringify(batch.body)}`)
  const uuid = batch.body.uuid as string
  await waitUntil(async () => (await api('GET', `/api/batches/${uuid}`, { token })).body.status === 'completed', 30_000)
  const kept = await api('PUT', `/api/batches/${uuid}/source?name=crm.csv`, {
    token,
    raw: 'name,email\nJane,valid@example.com\nJohn,invalid@example.com\n',
    headers: { 'content-type': 'text/csv' }
  })
  if (kept.status !== 201) throw new Error(`kept file: ${kept.status} ${JSON.stringify(kept.body)}`)
}

/** The kinds of file the data directory must hold by now (the positive control), each by a pattern of its path. */
const EXPECTED: Array<[string, RegExp]> = [
  ['the event store', /^events\.db$/],
  ["the event store's WAL", /^events\.db-wal$/],
  ["the event store's shared memory", /^events\.db-shm$/],
  ['the read store', /^reads\.db$/],
  ["the read store's WAL", /^reads\.db-wal$/],
  ['the data keys', /^keys\.db$/],
  ["the data keys' WAL", /^keys\.db-wal$/],
  ['the secrets', /^secrets\.json$/],
  ['the JWT signing key', /^jwt-ed25519\.pem$/],
  ['the JWT public key', /^jwt-ed25519\.pub\.pem$/],
  ['a mail in the outbox', /^outbox\/[^/]+\.eml$/],
  ['a kept list file', /^blobs\/[^/]+\/[^/]+$/]
]

function checkModes(t: Test, dataDir: string): void {
  const found = modes(dataDir)
  for (const [what, pattern] of EXPECTED)
    t.ok(
      [...found.keys()].some(p => pattern.test(p)),
      `${what} is there`
    )
  const wrong = [...found].filter(([, e]) => e.mode !== (e.directory ? 0o700 : 0o600)).map(([p, e]) => `${p} ${e.mode.toString(8)}`)
  t.same(wrong, [], `all ${found.size} entries: files 0600, directories 0700`)
}

t.test('as npm start runs it: every file under DATA_DIR is 0600, every directory 0700', async t => {
  const dataDir = join(t.testdir(), 'data')
  const svc = await startSvc(t, ['serve'], svcEnv(dataDir), npmStartNodeFlags())
  await signUpAndKeepAFile(client(svc.url), dataDir, 'modes@example.com')
  checkModes(t, dataDir)
})

t.test('in a process whose umask is 022, the stores make their files private themselves; an old 0644 database is tightened', async t => {
  const before = process.umask(0o022)
  t.teardown(() => {
    process.umask(before)
  })
  const dataDir = join(t.testdir(), 'data')
  mkdirSync(dataDir, { mode: 0o700 })
  // An empty events.db as an earlier release left it (SQLite reads an empty file as a new database).
  closeSync(openSync(join(dataDir, 'events.db'), 'w', 0o644))
  const service = await startTestService(testConfig(dataDir))
  t.teardown(() => service.close())
  await signUpAndKeepAFile(client(service.url), dataDir, 'modes-in-process@example.com')
  checkModes(t, dataDir)
})
