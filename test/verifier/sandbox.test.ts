import t from 'tap'
import { settled, signUp, build } from '../support/service.ts'
import { isDisposableDomain, isFreeDomain, isRoleLocalPart } from '../../src/verifier/lists.ts'

// The sandbox runs every local check for real and simulates only the network: with a test key, a typo gets its suggestion, a disposable
// domain, a role local part and a free provider are said; checks limited to the local
// ones end `unknown`/`smtp_not_requested`, never a failure reason for a check nobody asked
// for. The oracles: the maintained lists as the packages ship them (read directly) and the
// interface's results read back over HTTP; no network is touched (DNS is not configured).
const { dataDir, api } = await build(t, { VERIFIER_DNS_SERVERS: '127.0.102.1:53' })
const token = await signUp(api, dataDir, 'sandboxer@example.com')
const key = (await api('POST', '/api/keys', { token, body: { name: 'sandbox', environment: 'test' } })).body.raw_key as string
const verify = async (email: string, checks?: string[]): Promise<any> => {
  const r = await api('POST', '/api/verify', { token: key, body: { email, ...(checks && { checks }) } })
  if (r.status !== 202) throw new Error(`${r.status} ${JSON.stringify(r.body)}`)
  return await settled(api, key, r.body.uuid)
}

t.test('the lists the sandbox reads (positive controls)', async t => {
  t.ok(isDisposableDomain('mailinator.com'), 'mailinator.com is on the disposable list')
  t.ok(isRoleLocalPart('info'), 'info is a role')
  t.ok(isFreeDomain('gmail.com'), 'gmail.com is a free provider')
  t.notOk(isFreeDomain('acme.com'), 'acme.com is not')
})

t.test('a typo: the suggestion, and the verdict a live key would get', async t => {
  const job = await verify('valid@gmial.com')
  t.equal(job.result.did_you_mean, 'valid@gmail.com')
  t.same([job.verdict, job.reason], ['risky', 'low_quality'])
  t.ok(job.result.flags.includes('possible_typo'))
  t.equal(job.result.sandbox, true)
})

t.test('a disposable domain, a role local part, a free provider', async t => {
  const disposable = await verify('valid@mailinator.com')
  t.same([disposable.verdict, disposable.reason], ['risky', 'disposable'])
  const role = await verify('info@example.com')
  t.same([role.verdict, role.reason], ['risky', 'role_account'])
  t.ok(role.result.flags.includes('role'))
  const free = await verify('valid@gmail.com')
  t.same([free.verdict, free.reason], ['valid', 'accepted_email'])
  t.ok(free.result.flags.includes('free'), 'flagged free')
  const plain = await verify('valid@acme.com')
  t.notOk(plain.result.flags.includes('free'), 'acme.com is not')
})

t.test('the network part still follows the local part', async t => {
  const invalid = await verify('invalid@gmail.com')
  t.same([invalid.verdict, invalid.reason], ['invalid', 'mailbox_not_found'])
  t.ok(invalid.result.flags.includes('free'), "with the local checks' flags")
  const acceptAll = await verify('accept-all@example.com')
  t.same([acceptAll.verdict, acceptAll.reason], ['risky', 'accept_all'])
  t.same((await verify('nope')).reason, 'invalid_syntax')
})

t.test('checks limited to the local ones: decided from them, the mailbox named as not asked', async t => {
  const local = ['syntax', 'typo', 'disposable', 'role', 'free']
  const plain = await verify('valid@example.com', local)
  t.same([plain.verdict, plain.reason, plain.result.retryable], ['unknown', 'smtp_not_requested', false], 'not smtp_unavailable (which reads as an outage)')
  t.same(
    plain.result.checks.map((c: { name: string }) => c.name),
    local,
    'each check that ran, and no smtp record'
  )
  t.same(
    [(await verify('valid@mailinator.com', local)).reason, (await verify('valid@gmial.com', local)).reason, (await verify('info@example.com', local)).reason],
    ['disposable', 'low_quality', 'role_account'],
    'what the local checks found still decides'
  )
  const live = (await api('POST', '/api/keys', { token, body: { name: 'live', environment: 'live' } })).body.raw_key
  const r = await api('POST', '/api/verify', { token: live, body: { email: 'someone@example.com', checks: local } })
  const job = await settled(api, live, r.body.uuid)
  t.same([job.verdict, job.reason], ['unknown', 'smtp_not_requested'], 'a live key the same (no network was asked)')
})
