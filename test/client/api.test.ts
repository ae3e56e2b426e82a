import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { startMailWorld } from '../support/mail-world.ts'
import { startTestService, testConfig } from '../support/service.ts'

// A client generated from the document: the
// service's /openapi.json through openapi-typescript, and a program written against the
// generated types with openapi-fetch — sign up, create a key, submit with `wait`, list
// jobs with filters, read wallet transactions, create a batch — type-checked with no cast,
// then run against the service. The oracles: tsc's verdict on the program, and what the
// program read back from the service. This file owns 127.0.105.0/24.
const exec = promisify(execFile)
// Child processes without tap's loaders (its NODE_OPTIONS hook require(), which tsc's ES module bin does not survive).
const { NODE_OPTIONS: _tapLoaders, ...cleanEnv } = process.env
const run = async (file: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeout?: number } = {}): Promise<{ stdout: string; stderr: string }> =>
  await exec(file, args, { ...options, env: { ...cleanEnv, ...options.env } })
const root = new URL('../..', import.meta.url).pathname
const world = await startMailWorld({
  dns_ip: '127.0.105.1',
  domains: [{ name: 'client-world.com', mx: [{ preference: 10, exchange: 'mx.client-world.com' }] }],
  hosts: [
    {
      name: 'mx.client-world.com',
      ip: '127.0.105.2',
      rcpt: a => (a.startsWith('jane@') ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 User unknown' })
    }
  ]
})
t.teardown(() => world.close())
const dataDir = t.testdir()
const service = await startTestService(testConfig(dataDir, { VERIFIER_DNS_SERVERS: world.dns_server }))
t.teardown(() => service.close())
const work = join(dataDir, 'client-work')
mkdirSync(work)
writeFileSync(
  join(work, 'tsconfig.json'),
  JSON.stringify({
    compilerOptions: {
      target: 'es2024',
      module: 'nodenext',
      moduleResolution: 'nodenext',
      strict: true,
      noEmit: true,
      allowImportingTsExtensions: true,
      erasableSyntaxOnly: true,
      verbatimModuleSyntax: true,
      skipLibCheck: false,
      types: ['node']
    },
    include: ['*.ts']
  })
)

const PROGRAM = `import createClient from 'openapi-fetch'
import { readdirSync, readFileSync } from 'node:fs'
import type { paths } from './schema.d.ts'

const base = process.env.BASE_URL ?? ''
const outbox = process.env.OUTBOX ?? ''
const email = 'generated-client@example.com'
const api = createClient<paths>({ baseUrl: base })

const registered = await api.POST('/api/auth/register', { body: { email, password: 'a long passphrase of mine', locale: 'en' } })
if (registered.response.status !== 204) throw new Error('register: ' + registered.response.status)
let code: string | null = null
for (let i = 0; i < 100 && code === null; i++) {
  for (const f of readdirSync(outbox)) {
    const text = readFileSync(outbox + '/' + f, 'utf8')
    if (text.includes('To: ' + email)) code = /code is (\\d{6})/.exec(text)?.[1] ?? null
  }
  if (code === null) await new Promise(resolve => setTimeout(resolve, 50))
}
if (code === null) throw new Error('no code mailed')
const confirmed = await api.POST('/api/auth/confirm', { body: { email, code } })
if (!confirmed.data) throw new Error('confirm: ' + JSON.stringify(confirmed.error))
const session = createClient<paths>({ baseUrl: base, headers: { authorization: 'Bearer ' + confirmed.data.access_token } })

const created = await session.POST('/api/keys', { body: { name: 'generated', environment: 'live' } })
if (!created.data) throw new Error('key: ' + JSON.stringify(created.error))
const key = createClient<paths>({ baseUrl: base, headers: { authorization: 'Bearer ' + created.data.raw_key } })

const submitted = await key.POST('/api/verify', { body: { email: 'jane@client-world.com' } })
if (!submitted.data) throw new Error('submit: ' + JSON.stringify(submitted.error))
const job = await key.GET('/api/verify/{uuid}', { params: { path: { uuid: submitted.data.uuid }, query: { wait: 10 } } })
if (!job.data) throw new Error('job: ' + JSON.stringify(job.error))

const listed = await key.GET('/api/jobs', { params: { query: { status: 'completed', verdict: 'valid,risky', sort: 'created_at', order: 'desc', limit: 5, offset: 0 } } })
if (!listed.data) throw new Error('jobs: ' + JSON.stringify(listed.error))

// The capture is the job's settlement, appended just after its completion: read until it is there (bounded), as a client would.
let ledger = await key.GET('/api/wallet/transactions', { params: { query: { sort: 'occurred_at', order: 'asc', limit: 10 } } })
for (let i = 0; i < 100 && ledger.data && !ledger.data.items.some(t => t.transaction_type === 'capture'); i++) {
  await new Promise(resolve => setTimeout(resolve, 50))
  ledger = await key.GET('/api/wallet/transactions', { params: { query: { sort: 'occurred_at', order: 'asc', limit: 10 } } })
}
if (!ledger.data) throw new Error('transactions: ' + JSON.stringify(ledger.error))

const batch = await key.POST('/api/batches', { body: { emails: ['jane@client-world.com', 'nobody@client-world.com'], final: true, name: 'from a generated client' } })
if (!batch.data) throw new Error('batch: ' + JSON.stringify(batch.error))
const done = await key.GET('/api/batches/{uuid}', { params: { path: { uuid: batch.data.uuid }, query: { wait: 20 } } })
if (!done.data) throw new Error('batch read: ' + JSON.stringify(done.error))

console.log(JSON.stringify({
  job: { status: job.data.status, verdict: job.data.verdict, reason: job.data.reason },
  listed: { total: listed.data.total, first: listed.data.items[0]?.uuid ?? null, submitted: submitted.data.uuid },
  ledger: ledger.data.items.map(i => i.transaction_type),
  batch: { status: done.data.status, name: done.data.name, valid: done.data.results.by_verdict.valid, invalid: done.data.results.by_verdict.invalid }
}))
`

t.test('generated from /openapi.json, a full flow type-checks without a cast and runs', async t => {
  writeFileSync(join(work, 'openapi.json'), await (await fetch(`${service.url}/openapi.json`)).text())
  await run(process.execPath, [
    join(root, 'tools/client-gen/node_modules/openapi-typescript/bin/cli.js'),
    join(work, 'openapi.json'),
    '--output',
    join(work, 'schema.d.ts')
  ])
  writeFileSync(join(work, 'program.ts'), PROGRAM)
  t.notMatch(PROGRAM, /\bas (any|unknown|never|\{|[A-Z])/, 'no cast in the program')
  const checked = await run(process.execPath, [join(root, 'node_modules/typescript/lib/tsc.js'), '-p', work]).then(
    () => ({ ok: true, out: '' }),
    (err: { stdout: string; stderr: string; message: string }) => ({
      ok: false,
      out: `${err.stdout}${err.stderr}${err.stdout === '' && err.stderr === '' ? err.message : ''}`
    })
  )
  t.ok(checked.ok, `tsc accepts the program against the generated types${checked.out ? `: ${checked.out.slice(0, 2_000)}` : ''}`)
  const ran = await run(process.execPath, [join(work, 'program.ts')], { env: { BASE_URL: service.url, OUTBOX: join(dataDir, 'outbox') }, timeout: 60_000 })
  const r = JSON.parse(ran.stdout.trim().split('\n').pop()!)
  t.same(r.job, { status: 'completed', verdict: 'valid', reason: 'accepted_email' }, 'the job, answered by the wait')
  t.equal(r.listed.first, r.listed.submitted, 'the filtered list holds it')
  t.ok(r.ledger.includes('grant') && r.ledger.includes('capture'), "the ledger: the grant and the job's capture")
  t.same(r.batch, { status: 'completed', name: 'from a generated client', valid: 1, invalid: 1 }, 'the batch, completed')
})

t.test('a wrong use of the API does not type-check', async t => {
  writeFileSync(
    join(work, 'program.ts'),
    `import createClient from 'openapi-fetch'\nimport type { paths } from './schema.d.ts'\nconst api = createClient<paths>({ baseUrl: 'http://127.0.0.1:1' })\nawait api.GET('/api/jobs', { params: { query: { limit: 'five' } } })\nawait api.POST('/api/verify', { body: { address: 'x@y.z' } })\n`
  )
  const checked = await run(process.execPath, [join(root, 'node_modules/typescript/lib/tsc.js'), '-p', work]).then(
    () => '',
    (err: { stdout: string; stderr: string }) => err.stdout + err.stderr
  )
  t.match(checked, /program\.ts\(4,/, 'a string limit is refused (the document says integer)')
  t.match(checked, /program\.ts\(5,/, 'a body without its email is refused')
})

t.test("the repository's client (src/client/api.ts) is the generated one", async t => {
  const api = readFileSync(join(root, 'src/client/api.ts'), 'utf8')
  t.match(api, /from '\.\/generated\/schema\.d\.ts'/)
  t.match(readFileSync(join(root, 'package.json'), 'utf8'), /"prepare": "node bin\/prepare\.js"/, 'built by npm install')
  t.match(readFileSync(join(root, 'bin/prepare.js'), 'utf8'), /await import\('\.\.\/scripts\/build\.ts'\)/, 'whose prepare script runs the build')
})
