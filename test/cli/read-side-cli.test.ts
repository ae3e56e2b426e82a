import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { signUp, build } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { dumpReadModels } from '../support/read-models.ts'
import { WALLETS, WALLET_TRANSACTIONS, type WalletDoc, type WalletTransactionDoc } from '../../src/projections/wallets.ts'

// svc ledger audit and svc projections rebuild, run as an operator runs them: a separate
// process on the same DATA_DIR while the service serves.

const run = promisify(execFile)
const cli = new URL('../../src/cli.ts', import.meta.url).pathname
const { dataDir, service, api } = await build(t)
const env = { ...process.env, DATA_DIR: dataDir, SVC_PROGRESS: '1' }
const svc = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
  try {
    const r = await run(process.execPath, [cli, ...args], { env })
    return { code: 0, stdout: r.stdout, stderr: r.stderr }
  } catch (err: any) {
    return { code: err.code ?? -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' }
  }
}

const token = await signUp(api, dataDir, 'auditee@example.com')
const other = await signUp(api, dataDir, 'bystander@example.com')
for (let i = 0; i < 12; i++) {
  const r = await api('POST', '/api/verify', {
    token: i % 3 === 0 ? other : token,
    body: { email: i % 2 === 0 ? `p${i}@mailinator.com` : 'not an address', checks: ['syntax', 'disposable'] }
  })
  if (r.status !== 202) throw new Error(`verify: ${r.status}`)
}
for (const tk of [token, other])
  await waitUntil(async () => (await api('GET', '/api/jobs?status=queued,deferred&limit=1', { token: tk })).body.total === 0, 20_000)
const me = (await api('GET', '/api/users/me', { token })).body.uuid as string
await waitUntil(async () => (await api('GET', '/api/wallet', { token })).body.reserved === 0)

t.test('svc ledger audit: no difference on a sound ledger, for one account and for all', async t => {
  const one = await svc('ledger', 'audit', '--email', 'auditee@example.com')
  t.equal(one.code, 0, one.stderr)
  const r = JSON.parse(one.stdout)
  const stream = (await service.core.store.readStream(`wallet-${me}`)).filter(e => e.type !== 'WalletBooksClosed')
  t.match(r, { ok: true, accounts: 1, transactions: stream.length, differences: [] })
  t.match(one.stderr, /ledger audit .*events\/s/, 'a progress bar with the rate on stderr')
  const all = await svc('ledger', 'audit')
  t.equal(all.code, 0, all.stderr)
  t.match(JSON.parse(all.stdout), { ok: true, accounts: 2, differences: [] })
  const nobody = await svc('ledger', 'audit', '--email', 'nobody@example.com')
  t.not(nobody.code, 0, 'an unknown account: non-zero exit')
  t.match(nobody.stderr, /account\.not_found/)
})

t.test('svc ledger audit prints each difference and exits non-zero; svc projections rebuild repairs the read model', async t => {
  const reads = service.core.ctx.reads
  const wallet = (await reads.collection<WalletDoc>(WALLETS).get(me))!
  const [tx] = await reads.collection<WalletTransactionDoc>(WALLET_TRANSACTIONS).find({ where: { user_uuid: me }, sort: [['occurred_at', -1]], limit: 1 })
  // A read model gone wrong (as a bug or a hand edit would leave it): two documents altered behind the projection's back.
  await reads.write(
    [
      { op: 'put', spec: WALLETS, doc: { ...wallet, balance: wallet.balance + 7 } },
      { op: 'put', spec: WALLET_TRANSACTIONS, doc: { ...tx, amount: tx.amount - 1 } }
    ],
    []
  )
  t.equal((await api('GET', '/api/wallet', { token })).body.balance, wallet.balance + 7, 'the API shows the damage')
  const bad = await svc('ledger', 'audit', '--email', 'auditee@example.com')
  t.equal(bad.code, 1, 'exit 1 on a difference')
  const r = JSON.parse(bad.stdout)
  t.equal(r.ok, false)
  t.equal(r.differences.length, 2, 'each difference')
  t.match(r.differences.join('\n'), new RegExp(`shows balance ${wallet.balance + 7}, the ledger makes ${wallet.balance}`))
  t.match(r.differences.join('\n'), new RegExp(`transaction ${tx._id} shows amount ${tx.amount - 1}, the ledger makes ${tx.amount}`))

  const before = Object.fromEntries(Object.entries(await dumpReadModels(reads)).filter(([name]) => !name.startsWith('wallet')))
  const rebuilt = await svc('projections', 'rebuild', 'wallets')
  t.equal(rebuilt.code, 0, rebuilt.stderr)
  const out = JSON.parse(rebuilt.stdout)
  t.match(out, { projections: ['wallets'], switched: { wallets: true } })
  t.ok(out.events > 0 && out.events_per_s > 0, `rebuilt at ${out.events_per_s} events/s`)
  t.match(rebuilt.stderr, /rebuild wallets .*events\/s/, 'a progress bar with the rate on stderr')
  // The running service reads the new generation.
  await waitUntil(async () => (await api('GET', '/api/wallet', { token })).body.balance === wallet.balance)
  t.pass('the service serves the rebuilt wallet')
  const good = await svc('ledger', 'audit')
  t.equal(good.code, 0, 'the audit agrees again')
  const after = Object.fromEntries(Object.entries(await dumpReadModels(reads)).filter(([name]) => !name.startsWith('wallet')))
  t.same(after, before, 'the other projections were left alone')
})

t.test('svc projections rebuild all: the rebuilt read models equal the live ones, and the service goes on', async t => {
  const before = await dumpReadModels(service.core.ctx.reads)
  const r = await svc('projections', 'rebuild', 'all')
  t.equal(r.code, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  t.ok(Object.values(out.switched).every(Boolean), 'every projection switched')
  t.equal(Object.keys(out.switched).length, out.projections.length)
  t.same(await dumpReadModels(service.core.ctx.reads), before, 'rebuilt equals live')
  const job = await api('POST', '/api/verify', { token, body: { email: 'after@mailinator.com', checks: ['disposable'] } })
  t.equal(job.status, 202)
  await waitUntil(async () => (await api('GET', `/api/jobs/${job.body.uuid}`, { token })).body.status === 'completed')
  t.pass('the live projector goes on from the rebuilt generation')
  t.equal((await api('GET', '/api/jobs?limit=1', { token })).body.total, 9, 'and counts the new job once')
  const unknown = await svc('projections', 'rebuild', 'nope')
  t.not(unknown.code, 0, 'an unknown projection: non-zero exit')
  t.match(unknown.stderr, /no projection nope/)
})
