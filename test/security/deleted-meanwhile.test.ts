import t from 'tap'
import { signUp, build } from '../support/service.ts'
import { deleteUser } from '../../src/flows/delete-account/delete-user.ts'
import type { EventStore } from '../../src/ports/event-store.ts'

// A chunk accepted while its account is being deleted: the answer says what happened (410: the account and its batches
// are gone), never 503 "read it again in a moment" for a batch that will never be readable.
// The deletion is made to land right after the chunk's append (the store's append is
// wrapped in this test), before the route reads its answer back. The oracle: the account
// read back (401 afterwards) and the answer.
const { dataDir, service, api } = await build(t)
const password = 'correct horse battery staple'
const store: EventStore = service.core.store

/** Runs `then` once, right after the next append to a stream named `prefix…` (the append itself unchanged). */
function afterNextAppend(prefix: string, then: () => Promise<unknown>): void {
  const append = store.append.bind(store)
  store.append = async (stream, events, options) => {
    const r = await append(stream, events, options)
    if (stream.startsWith(prefix)) {
      store.append = append
      await then()
    }
    return r
  }
}

for (const route of ['create', 'chunk'] as const) {
  t.test(`${route === 'create' ? 'POST /api/batches' : 'POST /api/batches/{uuid}/emails'}: the account deleted right after the append is a 410`, async t => {
    const email = `deleted-meanwhile-${route}@example.com`
    const token = await signUp(api, dataDir, email, password)
    const me = (await api('GET', '/api/users/me', { token })).body.uuid as string
    const key = (await api('POST', '/api/keys', { token, body: { name: 'sandbox', environment: 'test' } })).body.raw_key as string
    let path = '/api/batches'
    if (route === 'chunk') {
      const opened = await api('POST', '/api/batches', { token: key, body: { emails: ['valid@example.com'], final: false } })
      t.equal(opened.status, 202, 'a batch opened before (positive control: the route answers 202 while the account lives)')
      path = `/api/batches/${opened.body.uuid}/emails`
    }
    afterNextAppend('batch-', async () => await deleteUser(service.core.ctx, me, password))
    const r = await api('POST', path, { token: key, body: { emails: ['valid@example.org'], final: true } })
    t.equal(r.status, 410)
    t.equal(r.body.code, 'batch.account_deleted')
    t.equal((await api('GET', '/api/users/me', { token })).status, 401, 'the account is gone indeed')
  })
}
