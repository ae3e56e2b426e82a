import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { client, signUp, startTestService, testConfig } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { plansFile } from '../support/plans.ts'
import { loadConfig } from '../../src/config.ts'

// Plans as configuration:
// every cap reads the caller's plan, and `svc subscription set` moves an account between
// plans with the events billing appends. The oracle is the plan file this test writes.
const run = promisify(execFile)
const cli = new URL('../../src/cli.ts', import.meta.url).pathname
const dataDir = t.testdir()
const PLANS_FILE = plansFile(dataDir, {
  free: { max_api_keys: 2, max_agents: 1, max_webhooks: 1, tokens_per_month: 100 },
  starter: { max_api_keys: 3, max_agents: 2, max_webhooks: 2, tokens_per_month: 700 }
})
const service = await startTestService(testConfig(dataDir, { PLANS_FILE, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }))
t.teardown(() => service.close())
const api = client(service.url)
const email = 'planner@example.com'
const token = await signUp(api, dataDir, email)
const svc = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
  try {
    const r = await run(process.execPath, [cli, ...args], { env: { ...process.env, DATA_DIR: dataDir, PLANS_FILE, LOG_LEVEL: 'silent' } })
    return { code: 0, ...r }
  } catch (err: any) {
    return { code: err.code, stdout: err.stdout, stderr: err.stderr }
  }
}

t.test("Free: the plan file's caps and tokens", async t => {
  t.equal((await api('GET', '/api/wallet', { token })).body.balance, 100, "Free's monthly tokens at confirmation")
  for (let i = 0; i < 2; i++) t.equal((await api('POST', '/api/keys', { token, body: { name: `k${i}`, environment: 'test' } })).status, 201)
  const third = await api('POST', '/api/keys', { token, body: { name: 'k2', environment: 'test' } })
  t.equal(third.status, 403)
  t.equal(third.body.code, 'create_api_key.limit_reached')
  t.equal((await api('POST', '/api/agents', { token, body: { name: 'a0', scopes: ['results:read'] } })).status, 201)
  t.equal((await api('POST', '/api/agents', { token, body: { name: 'a1', scopes: ['results:read'] } })).status, 403, 'agent cap')
  const scope = await api('POST', '/api/agents', { token, body: { name: 'manager', scopes: ['api_keys:create'] } })
  t.equal(scope.body.code, 'create_agent.scope_not_allowed', 'Free does not allow agents to create keys')
  t.equal((await api('POST', '/api/webhooks', { token, body: { url: 'https://hooks.example.com/a', events: ['job.completed'] } })).status, 201)
  t.equal((await api('POST', '/api/webhooks', { token, body: { url: 'https://hooks.example.com/b', events: ['job.completed'] } })).status, 403, 'webhook cap')
})

t.test("svc subscription set: the plan, its period's tokens once, and the caps follow", async t => {
  const bad = await svc('subscription', 'set', '--email', email, '--plan', 'platinum')
  t.equal(bad.code, 1, 'an unknown plan fails')
  t.match(bad.stderr, /subscription\.unknown_plan/)
  t.equal((await svc('subscription', 'set', '--email', 'nobody@example.com', '--plan', 'starter')).code, 1, 'an unknown account fails')
  t.equal((await svc('subscription', 'set', '--email', email, '--plan', 'starter', '--cycle', 'weekly')).code, 2, 'an unknown cycle is a usage error (exit 2)')
  const r = await svc('subscription', 'set', '--email', email, '--plan', 'starter', '--cycle', 'yearly', '--period-end', '2027-11-23T00:00:00Z')
  t.equal(r.code, 0, r.stderr)
  t.match(JSON.parse(r.stdout), {
    subscription: { plan: 'starter', cycle: 'yearly', current_period_end: '2027-11-23T00:00:00Z' },
    changed: true,
    tokens_granted: 12 * 700
  })
  const repeat = JSON.parse(
    (await svc('subscription', 'set', '--email', email, '--plan', 'starter', '--cycle', 'yearly', '--period-end', '2027-11-23T00:00:00Z')).stdout
  )
  t.match(repeat, { changed: false, tokens_granted: 0 }, 'the same plan again changes nothing')
  await waitUntil(async () => (await api('GET', '/api/subscription', { token })).body.plan.code === 'starter', 10_000)
  t.equal((await api('GET', '/api/wallet', { token })).body.balance, 100 + 12 * 700)
  t.equal((await api('POST', '/api/keys', { token, body: { name: 'k2', environment: 'test' } })).status, 201, "Starter's third key")
  t.equal((await api('POST', '/api/agents', { token, body: { name: 'manager', scopes: ['api_keys:create'] } })).status, 201, 'Starter allows it')
  t.equal((await api('POST', '/api/webhooks', { token, body: { url: 'https://hooks.example.com/b', events: ['job.completed'] } })).status, 201)
  const back = JSON.parse((await svc('subscription', 'set', '--email', email, '--plan', 'free')).stdout)
  t.match(back, { subscription: { plan: 'free', cycle: null }, changed: true })
  await waitUntil(async () => (await api('GET', '/api/subscription', { token })).body.plan.code === 'free', 10_000)
  t.equal((await api('POST', '/api/keys', { token, body: { name: 'k3', environment: 'test' } })).status, 403, "back on Free's cap (existing keys stay)")
})

t.test('a plan file is checked at start: a missing Free plan or a bad field stops the service', async t => {
  const broken = join(dataDir, 'broken.json')
  writeFileSync(broken, JSON.stringify({ currency: 'usd', plans: [{ code: 'pro' }], top_up: [] }))
  t.throws(() => loadConfig({ DATA_DIR: dataDir, PLANS_FILE: broken }), /plans file .*broken\.json/)
  t.throws(() => loadConfig({ DATA_DIR: dataDir, PLANS_FILE: join(dataDir, 'absent.json') }), /plans file/)
})
