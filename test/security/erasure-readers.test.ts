import t from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { client, signUp } from '../support/service.ts'
import { exited, npmStartNodeFlags, startSvc } from '../support/processes.ts'
import { waitUntil } from '../support/eventstore-contract.ts'

// Deleting an account must not freeze the API while another process reads keys.db (issue
// "Money, tenancy, availability", item 5), and an erasure that cannot finish at once is
// reported, then finished. The service runs as `npm start` runs it; a second process holds
// a read transaction on keys.db (the WAL cannot be emptied meanwhile) until the test tells
// it to let go, while the account is deleted and /readyz is asked every 100 ms. The oracles
// are orders, never clocks: what answered while the reader still held (it says when it lets
// go), the account's wrapped data key as keys.db held it before, searched byte by byte in
// keys.db and its WAL, /metrics and the service's log.
/** /readyz answers, one after another, that the reader must outlast. */
const READY_ANSWERS = 20
const METRICS_TOKEN = 'erasure-readers-metrics-token'
const dataDir = t.testdir()
const svc = await startSvc(
  t,
  ['serve'],
  {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    SIGNUP_SCREENING: 'lists',
    VERIFIER_EGRESS_TEST_INTERVAL_S: '0',
    METRICS_TOKEN
  },
  npmStartNodeFlags()
)
const api = client(svc.url)
const password = 'correct horse battery staple'
const token = await signUp(api, dataDir, 'held-reader@example.com', password)
const me = (await api('GET', '/api/users/me', { token })).body.uuid as string
const keysDb = join(dataDir, 'keys.db')

const keys = new DatabaseSync(keysDb, { readOnly: true })
const wrapped = Buffer.from((keys.prepare('SELECT wrapped FROM data_keys WHERE owner = ?').get(me) as { wrapped: Uint8Array }).wrapped)
keys.close()
/** Whether keys.db or its WAL still holds the account's wrapped key, byte for byte. */
const onDisk = (): boolean => [keysDb, `${keysDb}-wal`].some(f => existsSync(f) && readFileSync(f).includes(wrapped))
const metric = async (name: string): Promise<number> => {
  const text = await (await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text()
  return Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN)
}

t.test('a reader holding keys.db: /readyz keeps answering, the deletion answers, the late scrub is reported, then finished', async t => {
  t.ok(onDisk(), 'the data key is on disk before the deletion (positive control)')
  const holder = spawn(
    process.execPath,
    [
      '-e',
      `
    const { DatabaseSync } = require('node:sqlite')
    const db = new DatabaseSync(${JSON.stringify(keysDb)})
    db.exec('BEGIN')
    db.prepare('SELECT count(*) AS n FROM data_keys').get()
    console.log('holding')
    process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); console.log('released'); process.exit(0) })
  `
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] }
  )
  t.teardown(() => {
    holder.kill()
  })
  let said = ''
  holder.stdout!.on('data', (b: Buffer) => {
    said += b.toString()
  })
  await waitUntil(() => said.includes('holding'), 10_000)

  let probing = true
  const probe = { answers: 0, failures: 0 }
  const probing$ = (async () => {
    while (probing) {
      try {
        const r = await fetch(`${svc.url}/readyz`, { signal: AbortSignal.timeout(10_000) })
        await r.text()
        if (r.status === 200) probe.answers++
        else probe.failures++
      } catch {
        probe.failures++
      }
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  })()

  const deleted = await api('DELETE', `/api/users/${me}`, { token, body: { password } })
  t.equal(deleted.status, 204, 'the deletion answered')
  t.notMatch(said, /released/, 'while the reader still held: it did not wait for the reader')
  t.equal((await api('GET', '/api/users/me', { token })).status, 401, 'the account is gone')
  t.ok(onDisk(), 'the reader holds the old page on disk meanwhile (what the scrub must clear)')

  await waitUntil(async () => (await metric('erasure_scrub_stalled_total')) >= 1, 20_000)
  t.equal(await metric('erasure_scrubs_pending'), 1, '/metrics counts the unfinished scrub')
  // The log line is written beside the metric's count, a moment apart: read once it is there.
  await waitUntil(() => /erasure: a reader holds keys\.db's write-ahead log/.test(svc.output()), 10_000).catch(() => undefined)
  t.match(svc.output(), /erasure: a reader holds keys\.db's write-ahead log/, 'the log says so')

  // /readyz goes on answering, one answer after another, while the reader holds.
  const before = probe.answers
  await waitUntil(() => probe.answers >= before + READY_ANSWERS, 30_000)
  t.notMatch(said, /released/, `/readyz answered ${probe.answers} times, ${READY_ANSWERS} after the stall was reported, and the reader still held`)
  t.equal(probe.failures, 0, 'none failed')
  holder.stdin!.end('let go\n')
  await exited(holder)
  t.match(said, /released/, 'then the reader let go')
  probing = false
  await probing$

  await waitUntil(() => !onDisk(), 20_000)
  t.notOk(onDisk(), 'once the reader let go, the data key is gone from keys.db and its WAL')
  await waitUntil(async () => (await metric('erasure_scrubs_pending')) === 0, 5_000)
  t.pass('/metrics counts no unfinished scrub')
  // The log line goes out with the same report; it reaches this process through the child's stdout, a moment later.
  await waitUntil(() => /erasure: keys\.db write-ahead log emptied/.test(svc.output()), 5_000)
  t.match(svc.output(), /erasure: keys\.db write-ahead log emptied/, 'and the log says the scrub finished')
})
