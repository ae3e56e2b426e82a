import t from 'tap'
import { connect } from 'node:net'
import { client, signUp } from '../support/service.ts'
import { npmStartNodeFlags, startSvc } from '../support/processes.ts'

// One request must not take the service down.
// The service runs as `npm start` runs it, with its real heap limit; a Free account's
// test key sends batch bodies far larger than its plan accepts (40 MB of 5.5 million short
// strings, with a Content-Length and chunked without one, and a small body stuffed with
// values), while another client measures /healthz. The oracles: the plan's chunk size from
// /api/subscription, the status codes, the process still running, and the answers of a
// concurrent client.
const dataDir = t.testdir()
const svc = await startSvc(
  t,
  ['serve'],
  { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SIGNUP_SCREENING: 'lists', VERIFIER_EGRESS_TEST_INTERVAL_S: '0' },
  npmStartNodeFlags()
)
const api = client(svc.url)
const token = await signUp(api, dataDir, 'big-bodies@example.com')
const key = (await api('POST', '/api/keys', { token, body: { name: 'sandbox', environment: 'test' } })).body.raw_key as string
const chunkSize = (await api('GET', '/api/subscription', { token })).body.limits.max_chunk_size as number

/** 40 MB: 5.5 million strings of five characters in a batch body. */
function hugeBody(): Buffer {
  const n = 5_500_000
  const item = Buffer.from('"a@b.c",')
  const head = Buffer.from('{"final":true,"emails":[')
  const tail = Buffer.from('"a@b.c"]}')
  const body = Buffer.allocUnsafe(head.length + n * item.length + tail.length)
  head.copy(body, 0)
  for (let i = 0; i < n; i++) item.copy(body, head.length + i * item.length)
  tail.copy(body, head.length + n * item.length)
  return body
}
const huge = hugeBody()

/**
 * POSTs `body` over a plain TCP socket and resolves with the answer as soon as it is
 * whole, even when the server answers before the upload ends (what a 413 does); the rest
 * of the body is then not sent. Without `length`, the body goes chunked (no
 * Content-Length), in 64 KiB pieces, `repeat` times over (a stream far longer than any
 * allowance, without holding it in memory).
 */
async function post(path: string, body: Buffer, options: { length: boolean; repeat?: number }): Promise<{ status: number; body: any; sent: number }> {
  const url = new URL(path, svc.url)
  const socket = connect(Number(url.port), url.hostname)
  let received = Buffer.alloc(0)
  let answer: { status: number; body: any } | null = null
  /** Bytes of the body written to the socket before the answer came. */
  let sent = 0
  const answered = new Promise<void>(resolve => {
    socket.on('data', (b: Buffer) => {
      received = Buffer.concat([received, b])
      const split = received.indexOf('\r\n\r\n')
      if (split < 0) return
      const head = received.subarray(0, split).toString('latin1')
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? NaN)
      if (!(received.length >= split + 4 + length)) return
      const text = received.subarray(split + 4, split + 4 + length).toString('utf8')
      let parsed: unknown = text
      try {
        parsed = JSON.parse(text)
      } catch {}
      answer = { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), body: parsed }
      resolve()
    })
    socket.once('close', () => resolve())
  })
  socket.on('error', () => {}) // EPIPE / ECONNRESET should the server close while we send
  await new Promise<void>(resolve => socket.once('connect', () => resolve()))
  const head = [
    `POST ${url.pathname} HTTP/1.1`,
    `host: ${url.host}`,
    `authorization: Bearer ${key}`,
    'content-type: application/json',
    options.length ? `content-length: ${body.length}` : 'transfer-encoding: chunked',
    '',
    ''
  ].join('\r\n')
  const write = async (data: Buffer | string): Promise<boolean> => {
    if (answer !== null || socket.destroyed || !socket.writable) return false
    if (!socket.write(data)) await Promise.race([new Promise(resolve => socket.once('drain', resolve)), answered])
    return answer === null && !socket.destroyed
  }
  await write(head)
  sending: for (let round = 0; round < (options.repeat ?? 1); round++) {
    for (let at = 0; at < body.length; at += 65_536) {
      const piece = body.subarray(at, Math.min(at + 65_536, body.length))
      if (!(await write(options.length ? piece : Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])))) break sending
      sent += piece.length
    }
  }
  if (!options.length) await write('0\r\n\r\n')
  await answered
  socket.destroy()
  return { ...(answer ?? { status: 0, body: received.toString('utf8') }), sent }
}

/** Asks /healthz every 50 ms until stopped: how many answers came and how many failed (no answer within 5 s, or not 200). */
function probeHealth(): { stop: () => Promise<{ answers: number; failures: number }> } {
  let running = true
  const stats = { answers: 0, failures: 0 }
  const loop = (async () => {
    while (running) {
      try {
        const r = await fetch(`${svc.url}/healthz`, { signal: AbortSignal.timeout(5_000) })
        await r.text()
        if (r.status === 200) stats.answers++
        else stats.failures++
      } catch {
        stats.failures++
      }
      await new Promise(resolve => setTimeout(resolve, 50))
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop
      return stats
    }
  }
}

t.test('a 40 MB body with a Content-Length is a 413 before it is read; /healthz keeps answering', async t => {
  const probe = probeHealth()
  const r = await post('/api/batches', huge, { length: true })
  const health = await probe.stop()
  t.equal(r.status, 413)
  t.equal(r.body.code, 'create_batch.body_too_large')
  t.match(r.body.detail, String(chunkSize), "the answer names the plan's chunk size")
  t.ok(r.sent < huge.length, `answered after ${r.sent} of ${huge.length} bytes: the body was refused, not read`)
  t.ok(health.answers > 0, `/healthz answered ${health.answers} times meanwhile (positive control)`)
  t.equal(health.failures, 0, 'and never failed to answer')
  t.equal(svc.child.exitCode, null, 'the service is still running')
  t.equal((await fetch(`${svc.url}/healthz`)).status, 200, 'and answers')
})

t.test('the same body chunked, without a Content-Length, is stopped as it streams', async t => {
  const probe = probeHealth()
  // 220 MB streamed: the server reads and drops a refused body for a while after its 413 (so
  // that the client reads it), and a loaded client notices the answer late (up to 38 MB seen).
  const r = await post('/api/batches', huge, { length: false, repeat: 5 })
  const health = await probe.stop()
  t.equal(r.status, 413)
  t.equal(r.body.code, 'create_batch.body_too_large')
  t.ok(r.sent < huge.length * 5, `answered after ${r.sent} of ${huge.length * 5} bytes: stopped as it streamed`)
  t.ok(health.answers > 0 && health.failures === 0, `/healthz: ${JSON.stringify(health)}`)
  t.equal((await fetch(`${svc.url}/healthz`)).status, 200, 'the service still answers')
})

t.test('a chunk added to a batch is held to the same allowance', async t => {
  const batch = await api('POST', '/api/batches', { token: key, body: { emails: ['valid@example.com'], final: false } })
  t.equal(batch.status, 202, "a batch of the plan's size is accepted (positive control)")
  for (const length of [true, false]) {
    const r = await post(`/api/batches/${batch.body.uuid}/emails`, huge, { length })
    t.equal(r.status, 413, `Content-Length ${length ? 'given' : 'absent'}`)
    t.equal(r.body.code, 'add_chunk.body_too_large')
  }
  const after = await api('GET', `/api/batches/${batch.body.uuid}`, { token: key })
  t.equal(after.body.progress.total, 1, 'nothing was added')
  t.equal(svc.child.exitCode, null)
})

t.test("a small body stuffed with values is a 413 too; a list just over the chunk keeps the interface's 400", async t => {
  const stuffed = Buffer.from(`{"final":true,"emails":[${'1,'.repeat(200_000)}1]}`)
  t.ok(stuffed.length < chunkSize * 512, 'within the byte allowance')
  const r = await post('/api/batches', stuffed, { length: true })
  t.equal(r.status, 413)
  t.equal(r.body.code, 'create_batch.body_too_large')
  const deep = Buffer.from(`{"final":true,"emails":${'['.repeat(64)}${']'.repeat(64)}}`)
  t.equal((await post('/api/batches', deep, { length: true })).status, 413, 'deep nesting')
  const over = Array.from({ length: chunkSize + 1 }, (_, i) => `person${i}@example.com`)
  const r2 = await api('POST', '/api/batches', { token: key, body: { emails: over, final: true } })
  t.equal(r2.status, 400)
  t.equal(r2.body.code, 'create_batch.too_many')
  const fits = await api('POST', '/api/batches', { token: key, body: { emails: over.slice(0, chunkSize), final: true } })
  t.equal(fits.status, 202, "the plan's full chunk is accepted")
  t.equal(svc.child.exitCode, null)
})
