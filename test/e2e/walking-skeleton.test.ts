import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { startMailWorld } from '../support/mail-world.ts'
import { client, signUp, settled, startTestService, testConfig, confirmationCode } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { unlimitedRates } from '../support/plans.ts'

const run = promisify(execFile)

// This file owns 127.0.30.0/24.
const world = await startMailWorld({
  dns_ip: '127.0.30.1',
  domains: [{ name: 'acme-corp.com', mx: [{ preference: 10, exchange: 'mx.acme-corp.com' }] }],
  hosts: [
    {
      name: 'mx.acme-corp.com',
      ip: '127.0.30.2',
      rcpt: a =>
        a === 'jane@acme-corp.com'
          ? { code: 250, message: '2.1.5 Recipient OK' }
          : { code: 550, message: '5.1.1 The email account that you tried to reach does not exist' }
    }
  ]
})
t.teardown(() => world.close())

const dataDir = t.testdir()
const config = testConfig(dataDir, { VERIFIER_DNS_SERVERS: world.dns_server, ...unlimitedRates(dataDir) })
let service = await startTestService(config)
t.teardown(() => service.close())
let api = client(service.url)

const state: { token: string; key: string; jobs: Record<string, string>; balance: number } = { token: '', key: '', jobs: {}, balance: 0 }

t.test('sign up, confirm from the mailed code, get the Free plan tokens', async t => {
  state.token = await signUp(api, dataDir, 'dev@example.com')
  const w = await api('GET', '/api/wallet', { token: state.token })
  t.equal(w.status, 200)
  t.equal(w.body.balance, 1000)
  const cfg = await api('GET', '/api/config')
  t.equal(cfg.body.plans[0].code, 'free')
  t.equal(cfg.body.plans.find((p: { code: string }) => p.code === 'free').tokens_per_month, 1000)
  t.same(cfg.body.check_costs, { syntax: 0, typo: 0, disposable: 1, role: 0, free: 0, dns: 1, smtp: 6, catch_all: 2 })
})

t.test('create a live API key: raw key once, hash only in the list', async t => {
  const r = await api('POST', '/api/keys', { token: state.token, body: { name: 'ci', environment: 'live' } })
  t.equal(r.status, 201)
  t.match(r.body.raw_key, /^svc_[A-Za-z0-9_-]{40,}$/)
  t.notMatch(r.body.raw_key, /^svc_test_/)
  state.key = r.body.raw_key
  const list = await api('GET', '/api/keys', { token: state.token })
  t.equal(list.status, 200)
  t.equal(list.body.length, 1)
  t.equal(list.body[0].uuid, r.body.uuid)
  t.notOk('raw_key' in list.body[0])
  t.notOk(JSON.stringify(list.body).includes(state.key))
})

const expectations: Array<[string, string, string]> = [
  ['jane@acme-corp.com', 'valid', 'accepted_email'],
  ['ghost@acme-corp.com', 'invalid', 'mailbox_not_found'],
  ['someone@no-such-domain-here.com', 'invalid', 'invalid_domain'],
  ['not-an-address', 'invalid', 'invalid_syntax']
]

t.test('verify addresses end to end over real DNS and SMTP on loopback', async t => {
  for (const [email] of expectations) {
    const r = await api('POST', '/api/verify', { token: state.key, body: { email } })
    t.equal(r.status, 202, `${email} accepted`)
    t.equal(r.body.status, 'queued')
    t.match(r.body.uuid, /^[0-9a-f-]{36}$/)
    state.jobs[email] = r.body.uuid
  }
  for (const [email, verdict, reason] of expectations) {
    const job = await settled(api, state.key, state.jobs[email])
    t.equal(job.status, 'completed', `${email} completed`)
    t.equal(job.verdict, verdict, `${email} verdict`)
    t.equal(job.reason, reason, `${email} reason`)
    t.type(job.score, 'number')
    t.match(job.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    t.equal(job.result.verdict, verdict)
    t.type(job.result.checks, Array)
  }
  t.ok(
    world.transcript.some(l => l.includes('RCPT TO:<jane@acme-corp.com>')),
    'a real SMTP conversation happened'
  )
})

t.test('the wallet is debited for checks that ran, not for the rest', async t => {
  // Each job reserved 10 tokens (every check). valid and mailbox_not_found ran all of
  // them (10 each); the NXDOMAIN stopped after disposable and dns (2); the bad syntax
  // ran only free checks (0). The rest of each reservation was released.
  await waitUntil(async () => (await api('GET', '/api/wallet', { token: state.key })).body.reserved === 0)
  const w = await api('GET', '/api/wallet', { token: state.key })
  t.equal(w.body.spent, 22)
  t.equal(w.body.balance, 1000 - 22)
  state.balance = w.body.balance
})

t.test('a job can be read with the session token too', async t => {
  const r = await api('GET', `/api/jobs/${state.jobs['jane@acme-corp.com']}`, { token: state.token })
  t.equal(r.status, 200)
  t.equal(r.body.verdict, 'valid')
})

t.test('errors: 400 body without email, 400 malformed uuid, 401 no credential, 404 unknown and foreign jobs', async t => {
  const noEmail = await api('POST', '/api/verify', { token: state.key, body: { checks: ['syntax'] } })
  t.equal(noEmail.status, 400)
  t.equal(noEmail.headers.get('content-type'), 'application/problem+json; charset=utf-8')
  t.equal(noEmail.body.code, 'submit_job.invalid_request')
  t.equal(noEmail.body.errors[0].path, 'email')
  const badJson = await api('POST', '/api/verify', { token: state.key, raw: '{"email":' })
  t.equal(badJson.status, 400)
  t.equal(badJson.body.code, 'request.malformed_body')
  const badCheck = await api('POST', '/api/verify', { token: state.key, body: { email: 'a@b.com', checks: ['telepathy'] } })
  t.equal(badCheck.status, 400)
  t.equal(badCheck.body.code, 'submit_job.invalid_checks')
  t.equal((await api('GET', '/api/verify/not-a-uuid', { token: state.key })).status, 400)
  t.equal((await api('POST', '/api/verify', { body: { email: 'a@b.com' } })).status, 401)
  t.equal((await api('POST', '/api/verify', { token: 'svc_nope', body: { email: 'a@b.com' } })).status, 401)
  t.equal((await api('POST', '/api/verify', { token: 'eyJhbGciOiJFZERTQSJ9.e30.xx', body: { email: 'a@b.com' } })).status, 401)
  t.equal((await api('GET', '/api/verify/01a200f4-4e74-7104-92f0-217355e415da', { token: state.key })).status, 404)
  const other = await signUp(api, dataDir, 'other@example.com')
  const foreign = await api('GET', `/api/verify/${state.jobs['jane@acme-corp.com']}`, { token: other })
  t.equal(foreign.status, 404)
  t.equal(foreign.body.code, 'job.not_found')
  const w = await api('GET', '/api/wallet', { token: state.key })
  t.equal(w.body.balance, state.balance, 'rejected requests changed nothing')
})

t.test('accounts: wrong code 401, login 200, unconfirmed 403, wrong password 401, bad locale 400', async t => {
  const reg = await api('POST', '/api/auth/register', { body: { email: 'late@example.com', password: 'long enough password', locale: 'fr' } })
  t.equal(reg.status, 204)
  const again = await api('POST', '/api/auth/register', { body: { email: 'late@example.com', password: 'another password!', locale: 'en' } })
  t.equal(again.status, 204, 'same 204 when the email exists')
  // Unconfirmed: the second registration's password replaces the first, with a new code.
  const code = await confirmationCode(dataDir, 'late@example.com', 1)
  const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0')
  const bad = await api('POST', '/api/auth/confirm', { body: { email: 'late@example.com', code: wrong } })
  t.equal(bad.status, 401)
  t.equal(bad.body.code, 'confirm_account.invalid_code')
  const unconfirmed = await api('POST', '/api/auth/login', { body: { email: 'late@example.com', password: 'another password!' } })
  t.equal(unconfirmed.status, 403)
  t.equal(
    (await api('POST', '/api/auth/login', { body: { email: 'late@example.com', password: 'long enough password' } })).status,
    401,
    'the replaced password no longer matches'
  )
  const wrongPw = await api('POST', '/api/auth/login', { body: { email: 'dev@example.com', password: 'not the password' } })
  t.equal(wrongPw.status, 401)
  const absent = await api('POST', '/api/auth/login', { body: { email: 'nobody@example.com', password: 'whatever123' } })
  t.equal(absent.status, 401)
  const ok = await api('POST', '/api/auth/login', { body: { email: 'dev@example.com', password: 'correct horse battery staple' } })
  t.equal(ok.status, 200)
  t.equal(ok.body.token_type, 'Bearer')
  t.match(ok.headers.get('set-cookie'), /svc_refresh=[^;]+; .*HttpOnly/i)
  const locale = await api('POST', '/api/auth/register', { body: { email: 'x@example.com', password: 'long enough password', locale: 'xx' } })
  t.equal(locale.status, 400)
  t.equal(locale.body.code, 'register_user.invalid_locale')
  const short = await api('POST', '/api/auth/register', { body: { email: 'x@example.com', password: 'short', locale: 'en' } })
  t.equal(short.body.code, 'register_user.invalid_password')
  const common = await api('POST', '/api/auth/register', { body: { email: 'x@example.com', password: 'password123', locale: 'en' } })
  t.equal(common.status, 400)
  t.equal(common.body.code, 'register_user.common_password')
  const long = await api('POST', '/api/auth/register', {
    body: { email: 'x@example.com', password: `${'x'.repeat(64)} a sixty-four plus character passphrase`, locale: 'en' }
  })
  t.equal(long.status, 204, 'long passphrases are allowed')
})

t.test('402 when the wallet cannot cover the reservation; nothing is queued', async t => {
  const token = await signUp(api, dataDir, 'spender@example.com')
  const key = (await api('POST', '/api/keys', { token, body: { name: 'k', environment: 'live' } })).body.raw_key
  for (let i = 0; i < 100; i++) {
    const r = await api('POST', '/api/verify', { token: key, body: { email: 'jane@acme-corp.com' } })
    if (r.status !== 202) t.fail(`submission ${i}: ${r.status}`)
  }
  const r = await api('POST', '/api/verify', { token: key, body: { email: 'jane@acme-corp.com' } })
  t.equal(r.status, 402)
  t.equal(r.body.code, 'submit_job.insufficient_tokens')
  await waitUntil(async () => (await api('GET', '/api/wallet', { token: key })).body.reserved === 0, 30_000)
  const w = await api('GET', '/api/wallet', { token: key })
  t.equal(w.body.balance, 0)
  t.equal(w.body.spent, 1000, 'every reservation was captured once')
})

t.test('test keys never touch the wallet or the network', async t => {
  const key = (await api('POST', '/api/keys', { token: state.token, body: { name: 'sandbox', environment: 'test' } })).body.raw_key
  t.match(key, /^svc_test_/)
  const before = world.transcript.length
  const cases: Array<[string, string, string]> = [
    ['valid@anything.com', 'valid', 'accepted_email'],
    ['invalid@anything.com', 'invalid', 'mailbox_not_found'],
    ['greylisted@x.com', 'unknown', 'greylisted'],
    ['bad syntax', 'invalid', 'invalid_syntax']
  ]
  for (const [email, verdict, reason] of cases) {
    const r = await api('POST', '/api/verify', { token: key, body: { email } })
    t.equal(r.status, 202)
    const job = await settled(api, key, r.body.uuid)
    t.equal(job.verdict, verdict)
    t.equal(job.reason, reason)
    t.equal(job.environment, 'test')
  }
  t.equal(world.transcript.length, before, 'no SMTP traffic')
  const w = await api('GET', '/api/wallet', { token: state.token })
  t.equal(w.body.balance, state.balance)
})

t.test('svc wallet grant credits a wallet with an auditable event while the service runs', async t => {
  const cli = new URL('../../src/cli.ts', import.meta.url).pathname
  const out = await run(process.execPath, [cli, 'wallet', 'grant', '--email', 'dev@example.com', '--tokens', '25', '--reason', 'support ticket 42'], {
    env: { ...process.env, DATA_DIR: dataDir, SVC_OPERATOR: 'alice' }
  })
  t.match(JSON.parse(out.stdout), { granted: 25, balance: state.balance + 25 })
  await waitUntil(async () => (await api('GET', '/api/wallet', { token: state.token })).body.balance === state.balance + 25)
  const events = await service.core.store.readStream(`wallet-${JSON.parse(out.stdout).user_uuid}`)
  const grant = events.find(e => e.type === 'TokensGranted' && e.data.source === 'operator')
  t.match(grant, { data: { amount: 25, reason: 'support ticket 42' }, metadata: { actor: 'operator:alice' } })
  state.balance += 25
  const bad = await run(process.execPath, [cli, 'wallet', 'grant', '--email', 'nobody@example.com', '--tokens', '5', '--reason', 'x'], {
    env: { ...process.env, DATA_DIR: dataDir }
  }).catch(e => e)
  t.equal(bad.code, 1)
  t.match(bad.stderr, /no account/)
})

t.test('restart on the same DATA_DIR loses nothing: jobs, accounts, keys and balances rebuilt from events', async t => {
  const before = {
    jobs: await Promise.all(Object.values(state.jobs).map(async uuid => (await api('GET', `/api/verify/${uuid}`, { token: state.key })).body)),
    keys: (await api('GET', '/api/keys', { token: state.token })).body,
    wallet: (await api('GET', '/api/wallet', { token: state.token })).body
  }
  await service.close()
  service = await startTestService(config)
  api = client(service.url)
  const after = {
    jobs: await Promise.all(Object.values(state.jobs).map(async uuid => (await api('GET', `/api/verify/${uuid}`, { token: state.key })).body)),
    keys: (await api('GET', '/api/keys', { token: state.token })).body,
    wallet: (await api('GET', '/api/wallet', { token: state.token })).body
  }
  t.same(after, before)
  t.equal(after.wallet.balance, state.balance)
  const login = await api('POST', '/api/auth/login', { body: { email: 'dev@example.com', password: 'correct horse battery staple' } })
  t.equal(login.status, 200, 'the account and its password survive')
  const r = await api('POST', '/api/verify', { token: state.key, body: { email: 'jane@acme-corp.com' } })
  t.equal(r.status, 202, 'the key still authenticates')
  t.equal((await settled(api, state.key, r.body.uuid)).verdict, 'valid')
})
