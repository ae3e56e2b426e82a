import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { promisify } from 'node:util'
import { startMailWorld } from '../support/mail-world.ts'
import { startTestService, testConfig } from '../support/service.ts'

// The README's "First five minutes", run as it is written: its shell block, word for word, with `set -euo pipefail`, against the service on
// a fresh data directory, must end with a completed job. Only B and DATA_DIR (the
// variables the block reads) point it at this test's service; the address it verifies is
// answered by a simulated mail world (never the internet). This file owns 127.0.104.0/24.
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
const section = readme.slice(readme.indexOf('## First five minutes'))
const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? ''
const world = await startMailWorld({
  dns_ip: '127.0.104.1',
  domains: [{ name: 'example.org', mx: [{ preference: 10, exchange: 'mx.example.org' }] }],
  hosts: [
    {
      name: 'mx.example.org',
      ip: '127.0.104.2',
      rcpt: a => (a === 'someone@example.org' ? { code: 250, message: '2.1.5 OK' } : { code: 550, message: '5.1.1 User unknown' })
    }
  ]
})
t.teardown(() => world.close())
const dataDir = t.testdir()
const service = await startTestService(testConfig(dataDir, { VERIFIER_DNS_SERVERS: world.dns_server }))
t.teardown(() => service.close())

t.test('the block is a script that starts by failing loudly', async t => {
  t.match(block, /^set -euo pipefail$/m)
  t.notMatch(block, /123456/, 'no literal code to copy')
  t.notMatch(block, /curl -s /, 'every curl fails on an HTTP error (-f)')
})

t.test('run as written on a fresh data directory, it ends with a completed job; and again (a second account)', async t => {
  for (const run of [1, 2]) await t.test(`run ${run}`, async t => await runBlock(t))
})

t.test('a step that answers nothing: one line saying so, no stack trace', async t => {
  const field = /^field\(\) \{.*\}$/m.exec(block)?.[0] ?? ''
  t.ok(field !== '', 'the block defines field')
  const r = await promisify(execFile)('bash', ['-c', `${field}\nprintf '' | field code`], {
    env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` }
  }).catch((err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stderr: err.stderr }))
  t.equal((r as { code?: number }).code, 1)
  t.equal((r as { stderr: string }).stderr, 'no code in: (nothing)\n')
})

async function runBlock(t: Test): Promise<void> {
  const { NATS_URL: _nats, ...inherited } = process.env
  const r = await promisify(execFile)('bash', ['-c', block], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: {
      ...inherited,
      B: service.url,
      DATA_DIR: dataDir,
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      npm_config_update_notifier: 'false'
    },
    timeout: 120_000
  }).catch((err: { code: number; stdout: string; stderr: string }) => {
    t.fail(`the script failed (exit ${err.code}): ${err.stderr.slice(-1_000)}`)
    return { stdout: err.stdout, stderr: err.stderr }
  })
  const lines = r.stdout
    .trim()
    .split('\n')
    .filter(l => l.startsWith('{'))
  const [job, wallet] = lines.slice(-2).map(l => JSON.parse(l))
  t.match(job, { status: 'completed', verdict: 'valid', email: 'someone@example.org' }, 'the job completed (the mail world accepted the address)')
  t.match(wallet, { balance: 990 }, 'and the wallet was charged for it')
}
