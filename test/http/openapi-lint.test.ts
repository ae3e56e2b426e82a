import t from 'tap'
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { startTestService, testConfig } from '../support/service.ts'

// The document a generated client can trust, held by
// the linters the field uses, from the npm registry: redocly's recommended rules with no
// error and no warning, and spectral's `spectral:oas` with no error. The oracles: the
// linters' own reports on the document the running service serves.
const exec = promisify(execFile)
const { NODE_OPTIONS: _tapLoaders, ...env } = process.env
const root = new URL('../..', import.meta.url).pathname
const dir = t.testdir()
const service = await startTestService(testConfig(dir))
t.teardown(() => service.close())
const documentFile = join(dir, 'openapi.json')
writeFileSync(documentFile, await (await fetch(`${service.url}/openapi.json`)).text())
const lint = async (bin: string, args: string[]): Promise<{ code: number; out: string }> =>
  await exec(process.execPath, [join(root, 'node_modules', bin), ...args], {
    env: { ...env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    timeout: 120_000
  }).then(
    r => ({ code: 0, out: r.stdout + r.stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, out: err.stdout + err.stderr })
  )

t.test('redocly lint, recommended rules: no error, no warning', async t => {
  const r = await lint('@redocly/cli/bin/cli.js', ['lint', documentFile, '--extends', 'recommended', '--format', 'stylish'])
  t.equal(r.code, 0, r.out.slice(-3_000))
  t.notMatch(r.out, /warning|error/i, 'no warning and no error reported')
  t.match(r.out, /valid/i)
})

t.test('spectral, spectral:oas: no error', async t => {
  const r = await lint('@stoplight/spectral-cli/dist/index.js', [
    'lint',
    documentFile,
    '--ruleset',
    join(root, '.spectral.yaml'),
    '--fail-severity',
    'error',
    '--format',
    'text'
  ])
  t.equal(
    r.code,
    0,
    r.out
      .split('\n')
      .filter(l => /\berror\b/.test(l))
      .slice(0, 20)
      .join('\n')
  )
  t.notMatch(r.out, /^\s*\d+:\d+\s+error\b/m, 'no error')
})
