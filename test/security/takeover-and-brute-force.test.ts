import t from 'tap'
import { join } from 'node:path'
import { confirmationCode, outboxMailsTo, build } from '../support/service.ts'
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite.ts'
import { LOGIN_FAILURES_BEFORE_LOCK } from '../../src/domain/user/decider.ts'

// Account takeover paths, tried as an attacker would: registering someone's address first, and guessing passwords faster than the
// lock can count them. The oracles: the mailbox (outbox files), and the event store's own
// record of which password checks were judged.
const { dataDir, api } = await build(t)

async function userUuidOf(token: string): Promise<string> {
  return (await api('GET', '/api/users/me', { token })).body.uuid
}

t.test("register first, owner registers and confirms: the attacker's password never works", async t => {
  const email = 'victim@example.com'
  const attacker = 'attacker controls this one'
  const owner = "the owner's own passphrase"
  t.equal((await api('POST', '/api/auth/register', { body: { email, password: attacker, locale: 'en' } })).status, 204, 'the attacker registers first')
  const first = await confirmationCode(dataDir, email)
  t.equal((await api('POST', '/api/auth/register', { body: { email, password: owner, locale: 'fr' } })).status, 204, 'the owner registers: the same 204')
  const second = await confirmationCode(dataDir, email, 1)
  t.equal(outboxMailsTo(dataDir, email).length, 2, "the owner's registration mailed a new code")
  const stale = await api('POST', '/api/auth/confirm', { body: { email, code: first } })
  t.equal(stale.status, 401, 'the code of the earlier registration is void')
  const confirmed = await api('POST', '/api/auth/confirm', { body: { email, code: second } })
  t.equal(confirmed.status, 200, 'the owner confirms with the code of their registration')
  t.equal((await api('POST', '/api/auth/login', { body: { email, password: attacker } })).status, 401, "the attacker's password does not sign in")
  const mine = await api('POST', '/api/auth/login', { body: { email, password: owner } })
  t.equal(mine.status, 200, "the owner's does")
  t.equal((await api('GET', '/api/users/me', { token: mine.body.access_token })).body.locale, 'fr', "with the owner's locale")
  // After confirmation a registration changes nothing (and says nothing).
  t.equal((await api('POST', '/api/auth/register', { body: { email, password: attacker, locale: 'en' } })).status, 204)
  t.equal((await api('POST', '/api/auth/login', { body: { email, password: attacker } })).status, 401, "still not the attacker's")
  t.equal(outboxMailsTo(dataDir, email).length, 2, 'and no code is mailed')
})

async function account(email: string, password: string): Promise<{ token: string; uuid: string }> {
  await api('POST', '/api/auth/register', { body: { email, password, locale: 'en' } })
  const c = await api('POST', '/api/auth/confirm', { body: { email, code: await confirmationCode(dataDir, email) } })
  return { token: c.body.access_token, uuid: await userUuidOf(c.body.access_token) }
}

async function judged(uuid: string): Promise<number> {
  const store = new SqliteEventStore(join(dataDir, 'events.db'))
  try {
    return (await store.readStream(`user-${uuid}`)).filter(e => e.type === 'PasswordCheckStarted').length
  } finally {
    await store.close()
  }
}

t.test("101 concurrent sign-ins, the right password last: at most the lock's threshold are judged, the right one gets 429", async t => {
  const email = 'brute@example.com'
  const password = 'the right passphrase here'
  const { uuid } = await account(email, password)
  const before = await judged(uuid)
  const wrong = Array.from({ length: 100 }, async (_, i) => await api('POST', '/api/auth/login', { body: { email, password: `wrong guess number ${i}` } }))
  const right = api('POST', '/api/auth/login', { body: { email, password } })
  const answers = await Promise.all([...wrong, right])
  const statuses = answers.map(a => a.status)
  t.ok(
    statuses.slice(0, 100).every(s => s === 401 || s === 429),
    'every guess is 401 or 429'
  )
  const judgedNow = (await judged(uuid)) - before
  t.ok(judgedNow <= LOGIN_FAILURES_BEFORE_LOCK, `${judgedNow} password checks were judged (at most ${LOGIN_FAILURES_BEFORE_LOCK})`)
  t.ok(statuses.filter(s => s === 401).length <= LOGIN_FAILURES_BEFORE_LOCK, `${statuses.filter(s => s === 401).length} answers 401`)
  t.equal(statuses[100], 429, 'the right password, last, is refused while locked')
  const after = await api('POST', '/api/auth/login', { body: { email, password } })
  t.equal(after.status, 429, 'and stays refused')
})

t.test('wrong current passwords on email change lock the account, sign-in included', async t => {
  const email = 'changer@example.com'
  const password = 'my real current passphrase'
  const { token, uuid } = await account(email, password)
  const statuses: number[] = []
  for (let i = 0; i < 30; i++) {
    const r = await api('PATCH', `/api/users/${uuid}/email`, { token, body: { new_email: `new${i}@example.com`, current_password: `not it ${i}` } })
    statuses.push(r.status)
  }
  t.same(statuses.slice(0, LOGIN_FAILURES_BEFORE_LOCK), Array(LOGIN_FAILURES_BEFORE_LOCK).fill(400), 'the first wrong ones are judged wrong')
  t.ok(
    statuses.slice(LOGIN_FAILURES_BEFORE_LOCK).every(s => s === 429),
    'then the account is locked'
  )
  t.equal(
    (await api('PATCH', `/api/users/${uuid}/email`, { token, body: { new_email: 'right@example.com', current_password: password } })).status,
    429,
    'even for the right password'
  )
  const login = await api('POST', '/api/auth/login', { body: { email, password } })
  t.equal(login.status, 429, 'and sign-in shares the lock')
  t.equal(login.body.code, 'login.locked')
  t.equal(await judged(uuid), LOGIN_FAILURES_BEFORE_LOCK, 'exactly the threshold was judged')
})

t.test('a right current password clears the count', async t => {
  const email = 'forgetful@example.com'
  const password = 'remembered at the end'
  const { token, uuid } = await account(email, password)
  for (let i = 0; i < LOGIN_FAILURES_BEFORE_LOCK - 1; i++)
    t.equal((await api('POST', '/api/auth/login', { body: { email, password: `nope ${i}` } })).status, 401)
  t.equal(
    (await api('PATCH', `/api/users/${uuid}/password`, { token, body: { current_password: password, new_password: 'a brand new passphrase' } })).status,
    204,
    'the right current password'
  )
  for (let i = 0; i < LOGIN_FAILURES_BEFORE_LOCK - 1; i++)
    t.equal((await api('POST', '/api/auth/login', { body: { email, password: `nope again ${i}` } })).status, 401, 'counting starts again')
  t.equal((await api('POST', '/api/auth/login', { body: { email, password: 'a brand new passphrase' } })).status, 200)
})
