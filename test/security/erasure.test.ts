import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { startMailWorld } from '../support/mail-world.ts'
import { client, settled, signUp, startTestService, testConfig } from '../support/service.ts'
import { totp } from '../support/totp.ts'

// Crypto-shredding leaves nothing personal behind (issue "Account security to ASVS level
// 2"): an account with jobs (a typo suggestion, an SMTP reply naming the address), a
// webhook endpoint and a second factor is deleted; then events.db, keys.db, reads.db and
// their write-ahead logs are searched byte by byte. The oracles: the strings this test
// made up, the mail world's own reply text, and the account's wrapped data key as keys.db
// held it before the deletion. This file owns 127.0.72.0/24.
const rejected = 'zq-rejected-person@privatecorp.com'
const world = await startMailWorld({
  dns_ip: '127.0.72.1',
  domains: [
    { name: 'privatecorp.com', mx: [{ preference: 10, exchange: 'mx.privatecorp.com' }] },
    { name: 'gmial.com', mx: [{ preference: 10, exchange: 'mx.privatecorp.com' }] }
  ],
  hosts: [{ name: 'mx.privatecorp.com', ip: '127.0.72.2', rcpt: a => a === rejected ? { code: 550, message: `5.1.1 <${a}>: Recipient address rejected: User unknown in virtual mailbox table` } : { code: 250, message: '2.1.5 OK' } }]
})
t.teardown(() => world.close())
const dataDir = t.testdir()
const service = await startTestService(testConfig(dataDir, { VERIFIER_DNS_SERVERS: world.dns_server }))
t.teardown(() => service.close())
const api = client(service.url)
const password = 'correct horse battery staple'

t.test('after deletion no file holds the address, the suggestion, the reply, the webhook URL or the data key', async t => {
  const address = 'zq-account-owner@example.org'
  const token = await signUp(api, dataDir, address, password)
  const me = (await api('GET', '/api/users/me', { token })).body
  const key = (await api('POST', '/api/keys', { token, body: { name: 'k', environment: 'live' } })).body.raw_key
  const refused = await settled(api, key, (await api('POST', '/api/verify', { token: key, body: { email: rejected } })).body.uuid)
  t.match(refused.result?.smtp?.message ?? '', rejected, 'the API shows the reply text naming the address (positive control)')
  const typo = await settled(api, key, (await api('POST', '/api/verify', { token: key, body: { email: 'zq-typo-person@gmial.com' } })).body.uuid)
  t.equal(typo.result?.did_you_mean, 'zq-typo-person@gmail.com', 'and the suggestion')
  const hook = { url: 'https://zq-hook.example.net/private-path-4711', description: 'zq private endpoint description' }
  const endpoint = await api('POST', '/api/webhooks', { token, body: { ...hook, events: ['job.completed'] } })
  t.equal(endpoint.status, 201)
  t.equal((await api('GET', `/api/webhooks/${endpoint.body.uuid}`, { token })).body.url, hook.url, 'the URL reads back')
  const setup = (await api('POST', '/api/users/me/2fa/enable', { token })).body
  t.equal((await api('POST', '/api/users/me/2fa/verify-setup', { token, body: { code: totp(setup.secret), password } })).status, 204)

  const sealedOnly = readFileSync(join(dataDir, 'events.db'))
  const wal = existsSync(join(dataDir, 'events.db-wal')) ? readFileSync(join(dataDir, 'events.db-wal')) : Buffer.alloc(0)
  for (const s of [rejected, 'zq-typo-person@gmail.com', hook.url, hook.description]) t.notOk(sealedOnly.includes(s) || wal.includes(s), `events hold "${s}" only sealed, even before the deletion`)

  const keys = new DatabaseSync(join(dataDir, 'keys.db'), { readOnly: true })
  const wrapped = Buffer.from((keys.prepare('SELECT wrapped FROM data_keys WHERE owner = ?').get(me.uuid) as { wrapped: Uint8Array }).wrapped)
  keys.close()
  t.ok(wrapped.length > 16, 'the account has a data key')

  t.equal((await api('DELETE', `/api/users/${me.uuid}`, { token, body: { password } })).status, 204)
  const secrets = [address, rejected, 'zq-typo-person@gmail.com', hook.url, hook.description, setup.secret]
  for (const file of ['events.db', 'events.db-wal', 'keys.db', 'keys.db-wal', 'reads.db', 'reads.db-wal']) {
    const path = join(dataDir, file)
    if (!existsSync(path)) continue
    const bytes = readFileSync(path)
    for (const s of secrets) t.notOk(bytes.includes(Buffer.from(s)), `${file}: no "${s.slice(0, 24)}…"`)
    t.notOk(bytes.includes(wrapped), `${file}: the destroyed data key is nowhere`)
  }
})
