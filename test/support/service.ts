import { readdirSync, readFileSync, existsSync, appendFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { pino } from 'pino'
import { loadConfig, type Config } from '../../src/config.ts'
import { startService, type Service } from '../../src/main.ts'
import { waitUntil } from './eventstore-contract.ts'
import { checkResponses } from './response-check.ts'
import { MAIL_WORLD_SMTP_PORT } from './mail-world.ts'

/** Config for a test service on a random port in `dataDir`, probing the given mail world. */
export function testConfig(dataDir: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    SIGNUP_SCREENING: 'lists',
    VERIFIER_EGRESS_TEST_INTERVAL_S: '0',
    VERIFIER_SMTP_TIMEOUT_MS: '1000',
    VERIFIER_DNS_TIMEOUT_MS: '1000',
    VERIFIER_HELO_NAME: 'verifier.test.example',
    // The mail world's hosts listen above 1024 (any user runs the tests).
    VERIFIER_SMTP_PORT: String(MAIL_WORLD_SMTP_PORT),
    ...(env.VERIFIER_DNS_SERVERS !== undefined && { VERIFIER_ALLOW_PRIVATE_TARGETS: 'true' }),
    ...env
  })
}

/**
 * The service a test file talks to, as fastify/demo's `build(t)`: on a fresh DATA_DIR (the
 * test's own directory), with `env` over the test configuration, closed at the end of `t`;
 * with the JSON client on its URL. `options.now`: the clock its commands read.
 */
export async function build(
  t: { testdir: () => string; teardown: (f: () => unknown) => void },
  env: Record<string, string> = {},
  options: { now?: () => Date } = {}
): Promise<{ service: Service; api: Api; dataDir: string }> {
  const dataDir = t.testdir()
  const service = await startTestService(testConfig(dataDir, env), options)
  t.teardown(() => service.close())
  return { service, api: client(service.url), dataDir }
}

/** Schema violations of every answer of the test services of this process (see `checkResponses`). */
export const responseViolations: string[] = []

/** Test services of this process started and not closed yet. */
let openServices = 0

/**
 * The all-in-one service on `config`, built for tests: every answer is checked against
 * the schema its route declares (a violation answers 500 `response.schema_violation`).
 * `now`: the clock its commands read (a test that would wait for time to pass moves it instead).
 */
export async function startTestService(config: Config, options: { now?: () => Date } = {}): Promise<Service> {
  const service = await startService(config, { logger: shutdownWarnings, instrument: checkResponses(responseViolations), now: options.now })
  openServices++
  const close = service.close
  let closed = false
  service.close = async () => {
    await close()
    if (closed) return
    closed = true
    // A test file ends with its last service's close: if its process is still here 20 s
    // later, what holds it is said on stderr (tap prints it for a file that then fails on
    // its timeout). The timer itself holds nothing. Only in a file tap runs (it sets TAP=1):
    // a benchmark goes on with other work after closing a service.
    if (--openServices === 0 && process.env.TAP === '1')
      setTimeout(() => {
        if (openServices === 0)
          process.stderr.write(`test service: 20 s after the last service closed, this process holds ${JSON.stringify(process.getActiveResourcesInfo())}\n`)
      }, 20_000).unref()
  }
  return service
}

/**
 * The test services' logger: silent but for the warning naming a shutdown step that has not
 * ended (every 10 s), on stderr, so that a test file that hangs at its service's close says where.
 */
const shutdownWarnings = pino(
  { level: 'warn' },
  {
    write(line: string) {
      if (line.includes('"step"') && line.includes('still closing')) process.stderr.write(`test service: ${line}`)
    }
  }
)

export type Api = (
  method: string,
  path: string,
  options?: { body?: unknown; token?: string; raw?: string; headers?: Record<string, string> }
) => Promise<{ status: number; body: any; headers: Headers }>

/**
 * Where the requests of one `tap` run are recorded for `npm run eval`'s interface coverage:
 * in the checkout's own `.tap/interface-coverage/` (never a shared path of /tmp, which
 * another user's run may own), a directory per runner process (every test file is a child
 * of it), a file per test file.
 */
const coverageDir = (runner = process.ppid): string => join(new URL('../../.tap/interface-coverage', import.meta.url).pathname, String(runner))
let coverageFile: string | null = null
/**
 * Records one exchange (method, path without the query, status) for the interface-coverage
 * report, from a test file the tap runner runs (it sets TAP_CHILD_ID): a benchmark or a
 * script that borrows this client records nothing, so `npm run eval` reads the last test run.
 */
export function record(method: string, path: string, status: number): void {
  if (process.env.TAP_CHILD_ID === undefined) return
  if (coverageFile === null) {
    mkdirSync(coverageDir(), { recursive: true })
    coverageFile = join(coverageDir(), `${process.pid}.jsonl`)
  }
  appendFileSync(coverageFile, `${JSON.stringify({ method, path: path.split('?')[0], status })}\n`)
}

/** A small JSON client for the app under test; every exchange is recorded for the interface-coverage report. */
export function client(baseUrl: string): Api {
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) }
    if (options.token) headers.authorization = `Bearer ${options.token}`
    let body: string | undefined
    if (options.raw !== undefined) {
      body = options.raw
      headers['content-type'] ??= 'application/json'
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers['content-type'] = 'application/json'
    }
    const res = await fetch(baseUrl + path, { method, headers, body })
    record(method, path, res.status)
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = text.length > 0 ? JSON.parse(text) : null
    } catch {}
    return { status: res.status, body: parsed, headers: res.headers }
  }
}

/** Mails in `DATA_DIR/outbox` addressed to `email`, oldest first. */
export function outboxMailsTo(dataDir: string, email: string): string[] {
  const dir = join(dataDir, 'outbox')
  if (!existsSync(dir)) return []
  const to = new RegExp(`^To: ${email.replace(/[.+]/g, '\\$&')}$`, 'mi')
  return readdirSync(dir)
    .filter(n => n.endsWith('.eml'))
    .sort()
    .map(f => readFileSync(join(dir, f), 'utf8'))
    .filter(text => to.test(text))
}

/**
 * Waits for a confirmation mail to `email` in `DATA_DIR/outbox` and returns its six-digit
 * code: the newest one, or with `skip`, the first one after the `skip` oldest mails.
 */
export async function confirmationCode(dataDir: string, email: string, skip?: number): Promise<string> {
  let code: string | null = null
  await waitUntil(() => {
    const mails = outboxMailsTo(dataDir, email).filter(m => /code is \d{6}|code de confirmation est \d{6}/.test(m))
    const mail = skip === undefined ? mails[mails.length - 1] : mails[skip]
    if (!mail) return false
    code = (/code is (\d{6})/.exec(mail) ?? /code de confirmation est (\d{6})/.exec(mail))![1]
    return true
  })
  return code!
}

/** Registers, confirms and returns an access token for a new account. */
export async function signUp(api: Api, dataDir: string, email: string, password = 'correct horse battery staple'): Promise<string> {
  const r = await api('POST', '/api/auth/register', { body: { email, password, locale: 'en' } })
  if (r.status !== 204) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`)
  const code = await confirmationCode(dataDir, email)
  const c = await api('POST', '/api/auth/confirm', { body: { email, code } })
  if (c.status !== 200) throw new Error(`confirm: ${c.status} ${JSON.stringify(c.body)}`)
  return c.body.access_token
}

/**
 * Polls a job until it is terminal (`completed` or `failed`): `deferred` (greylisting) is
 * still under way, not settled.
 */
export async function settled(api: Api, token: string, uuid: string): Promise<any> {
  let job: any
  await waitUntil(async () => {
    const r = await api('GET', `/api/verify/${uuid}`, { token })
    job = r.body
    return r.status === 200 && (job.status === 'completed' || job.status === 'failed')
  }, 20_000)
  return job
}

/**
 * The newest link to `path` (say `/reset-password`) in a mail to `email` in the outbox,
 * waited for: the body's quoted-printable undone (soft line breaks, `=XX` escapes).
 */
export async function mailedLink(dataDir: string, email: string, path: string): Promise<URL> {
  let link: URL | null = null
  const pattern = new RegExp(`(https?://[^\\s"<>]+${path.replace(/[.?]/g, '\\$&')}\\?[^\\s"<>]+)`, 'g')
  await waitUntil(() => {
    const bodies = outboxMailsTo(dataDir, email).map(m =>
      m.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    )
    const found = bodies.flatMap(b => [...b.matchAll(pattern)].map(m => m[1]))
    if (found.length === 0) return false
    link = new URL(found[found.length - 1])
    return true
  })
  return link!
}
