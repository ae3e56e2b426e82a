import t from 'tap'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { startMailWorld } from '../support/mail-world.ts'
import { settled, signUp, build } from '../support/service.ts'
import { totpNow } from '../support/totp.ts'
import { waitUntil } from '../support/eventstore-contract.ts'

// Crypto-shredding leaves nothing personal behind: an account with jobs (a typo suggestion, an SMTP reply naming the address), a
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
  hosts: [
    {
      name: 'mx.privatecorp.com',
      ip: '127.0.72.2',
      rcpt: a =>
        a === rejected
          ? { code: 550, message: `5.1.1 <${a}>: Recipient address rejected: User unknown in virtual mailbox table` }
          : { code: 250, message: '2.1.5 OK' }
    }
  ]
})
t.teardown(() => world.close())
const { dataDir, api } = await build(t, { VERIFIER_DNS_SERVERS: world.dns_server })
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
  // A customer's free text: names of a key, an agent and a batch, and an endpoint's description.
  const names = { key: 'zq key named after a private client', agent: 'zq agent of the private crm', batch: 'zq list of private customers' }
  const named = await api('POST', '/api/keys', { token, body: { name: names.key, environment: 'test' } })
  t.equal(named.body.name, names.key, "the key's name reads back in the clear")
  t.equal((await api('GET', `/api/keys/${named.body.uuid}`, { token })).body.name, names.key)
  const agent = await api('POST', '/api/agents', { token, body: { name: names.agent, scopes: ['results:read'] } })
  t.equal((await api('GET', `/api/agents/${agent.body.uuid}`, { token })).body.name, names.agent, "the agent's name reads back")
  const batch = await api('POST', '/api/batches', { token: named.body.raw_key, body: { emails: ['valid@example.com'], final: true, name: names.batch } })
  t.equal((await api('GET', `/api/batches/${batch.body.uuid}`, { token })).body.name, names.batch, "the batch's name reads back")
  const feed = (await api('GET', '/api/notifications?limit=96', { token })).body.items
  t.ok(
    feed.some((n: any) => n.kind === 'api_key_created' && n.message === `API key "${names.key}" was created` && n.data.name === names.key),
    "the feed says the key's name"
  )
  const outbox = join(dataDir, 'outbox')
  const mailsOf = (): string[] => readdirSync(outbox).filter(n => n.endsWith('.eml') && readFileSync(join(outbox, n), 'utf8').includes(address))
  t.ok(mailsOf().length > 0, "the outbox holds the account's confirmation mail (positive control)")
  const setup = (await api('POST', '/api/users/me/2fa/enable', { token })).body
  t.equal((await api('POST', '/api/users/me/2fa/verify-setup', { token, body: { code: await totpNow(setup.secret), password } })).status, 204)

  const sealedOnly = readFileSync(join(dataDir, 'events.db'))
  const wal = existsSync(join(dataDir, 'events.db-wal')) ? readFileSync(join(dataDir, 'events.db-wal')) : Buffer.alloc(0)
  for (const s of [rejected, 'zq-typo-person@gmail.com', hook.url, hook.description, names.key, names.agent, names.batch])
    t.notOk(sealedOnly.includes(s) || wal.includes(s), `events hold "${s}" only sealed, even before the deletion`)

  const keys = new DatabaseSync(join(dataDir, 'keys.db'), { readOnly: true })
  const wrapped = Buffer.from((keys.prepare('SELECT wrapped FROM data_keys WHERE owner = ?').get(me.uuid) as { wrapped: Uint8Array }).wrapped)
  keys.close()
  t.ok(wrapped.length > 16, 'the account has a data key')

  t.equal((await api('DELETE', `/api/users/${me.uuid}`, { token, body: { password } })).status, 204)
  await waitUntil(() => mailsOf().length === 0)
  t.same(
    readdirSync(outbox).filter(n => readFileSync(join(outbox, n), 'utf8').includes(address)),
    [],
    'no mail of the account is left in the outbox'
  )
  const secrets = [address, rejected, 'zq-typo-person@gmail.com', hook.url, hook.description, setup.secret, names.key, names.agent, names.batch]
  for (const file of ['events.db', 'events.db-wal', 'keys.db', 'keys.db-wal', 'reads.db', 'reads.db-wal']) {
    const path = join(dataDir, file)
    if (!existsSync(path)) continue
    const bytes = readFileSync(path)
    for (const s of secrets) t.notOk(bytes.includes(Buffer.from(s)), `${file}: no "${s.slice(0, 24)}…"`)
    t.notOk(bytes.includes(wrapped), `${file}: the destroyed data key is nowhere`)
  }
})
