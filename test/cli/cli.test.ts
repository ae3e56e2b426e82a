import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { readFileSync } from 'node:fs'
import { signUp, build } from '../support/service.ts'

// The operator command line in one style: exit 2 for a
// usage error, 1 for a failure, one code for an unknown account whatever the command,
// `error:` on stderr, required options marked in --help, --version, JSON on stdout, and
// `svc accounts show` telling an account without a secret. The oracles: package.json's
// version, what the API shows of the account, and the raw key and password this test made.
const run = promisify(execFile)
const cli = new URL('../../bin/svc.js', import.meta.url).pathname
const { dataDir, api } = await build(t)
const email = 'operator-view@example.com'
const password = 'correct horse battery staple'
const token = await signUp(api, dataDir, email, password)
const key = (await api('POST', '/api/keys', { token, body: { name: 'laptop', environment: 'live' } })).body
const { NATS_URL: _nats, ...inherited } = process.env

const svc = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
  try {
    const r = await run(process.execPath, [cli, ...args], { env: { ...inherited, DATA_DIR: dataDir, LOG_LEVEL: 'silent' } })
    return { code: 0, ...r }
  } catch (err: any) {
    return { code: err.code, stdout: err.stdout, stderr: err.stderr }
  }
}

t.test('--version and --help: exit 0; required options are marked', async t => {
  const version = await svc('--version')
  t.equal(version.code, 0)
  t.equal(version.stdout.trim(), JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version)
  const help = await svc('wallet', 'grant', '--help')
  t.equal(help.code, 0)
  t.match(help.stdout, /--email <address>\s+account email \(required\)/)
  t.match(help.stdout, /--tokens <n>\s+tokens to credit \(required\)/)
})

t.test('usage errors exit 2 with error: on stderr, and change nothing', async t => {
  for (const args of [
    ['no-such-command'],
    ['wallet', 'grant', '--email', email],
    ['wallet', 'grant', '--email', email, '--tokens', 'ten', '--reason', 'x'],
    ['subscription', 'set', '--email', email, '--plan', 'pro', '--cycle', 'weekly'],
    ['sessions', 'end'],
    ['accounts', 'show', '--nope']
  ]) {
    const r = await svc(...args)
    t.equal(r.code, 2, args.join(' '))
    t.match(r.stderr, /^error: /m, 'error: first')
  }
  t.equal((await api('GET', '/api/wallet', { token })).body.balance, 1_000, 'nothing was granted')
})

t.test('an unknown account: exit 1 and account.not_found, whatever the command', async t => {
  const nobody = 'nobody-at-all@example.com'
  for (const args of [
    ['accounts', 'ban', '--email', nobody],
    ['accounts', 'unban', '--email', nobody],
    ['accounts', 'show', '--email', nobody],
    ['wallet', 'grant', '--email', nobody, '--tokens', '5', '--reason', 'test'],
    ['subscription', 'set', '--email', nobody, '--plan', 'starter'],
    ['sessions', 'end', '--email', nobody],
    ['ledger', 'audit', '--email', nobody]
  ]) {
    const r = await svc(...args)
    t.equal(r.code, 1, args.slice(0, 2).join(' '))
    t.match(r.stderr, /^error: no account with the address nobody-at-all@example\.com \(account\.not_found\)$/m)
    t.equal(r.stdout, '', 'nothing on stdout')
  }
})

t.test('svc accounts show: status, plan, balance, keys, sessions as the API shows them; nothing secret', async t => {
  const r = await svc('accounts', 'show', '--email', email)
  t.equal(r.code, 0)
  const shown = JSON.parse(r.stdout)
  const me = (await api('GET', '/api/users/me', { token })).body
  t.match(shown, { user_uuid: me.uuid, email, status: 'confirmed', plan: { code: 'free', limits_plan: 'free' }, wallet: { balance: 1_000 } })
  t.same(
    shown.keys.map((k: any) => [k.uuid, k.name, k.environment, k.key_prefix]),
    [[key.uuid, 'laptop', 'live', key.key_prefix]],
    'the key by its prefix'
  )
  t.equal(shown.sessions.length, (await api('GET', '/api/users/me/sessions', { token })).body.length, 'the open sessions')
  for (const secret of [key.raw_key, password, token]) t.notOk(r.stdout.includes(secret), 'no raw key, password or token')
  t.notMatch(r.stdout, /hash|sealed:/, 'no hash and no sealed text')
})

t.test('svc mail show: the newest mail filed for an address, with its code', async t => {
  const other = 'mail-reader@example.com'
  t.equal((await api('POST', '/api/auth/register', { body: { email: other, password, locale: 'fr' } })).status, 204)
  const r = await svc('mail', 'show', '--to', other, '--wait', '10')
  t.equal(r.code, 0)
  const mail = JSON.parse(r.stdout)
  t.match(mail, { to: other, subject: 'Votre code de confirmation', code: /^\d{6}$/ })
  t.equal((await api('POST', '/api/auth/confirm', { body: { email: other, code: mail.code } })).status, 200, 'the code it read confirms the account')
  const none = await svc('mail', 'show', '--to', 'never-written@example.com')
  t.equal(none.code, 1)
  t.match(none.stderr, /\(mail\.not_found\)/)
})
