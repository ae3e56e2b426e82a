import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import type { Test } from 'tap'
import { MAIL_WORLD_SMTP_PORT } from './mail-world.ts'

const cli = new URL('../../src/cli.ts', import.meta.url).pathname

/**
 * The environment of a `svc` process under test: this process's environment without
 * NATS_URL (the embedded bus, unless the test names one), on `dataDir`, listening on a free
 * loopback port, screening sign-ups by lists only, with `extra` over it.
 */
/**
 * This process's environment for a child it starts, with the test runner's module hook made
 * idle: tap loads `@tapjs/processinfo` into every process (a module hook that records each
 * module loaded, for coverage and `tap --changed`, neither of which this suite uses) and
 * puts it back into any child's NODE_OPTIONS, but honours a child's own exclusion pattern.
 * Excluding every file spares a child `svc` 0.6–0.8 s of CPU at start on top of its own
 * 1.3–1.5 s (measured: time to listen and /proc/<pid>/stat, 3 starts each).
 */
function childEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...base, _TAPJS_PROCESSINFO_EXCLUDE_: '/./' }
}

export function svcEnv(dataDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { NATS_URL: _nats, ...inherited } = childEnv()
  return {
    ...inherited,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    SIGNUP_SCREENING: 'lists',
    VERIFIER_EGRESS_TEST_INTERVAL_S: '0',
    VERIFIER_HELO_NAME: 'verifier.test.example',
    // The mail world's hosts listen above 1024 (any user runs the tests).
    VERIFIER_SMTP_PORT: String(MAIL_WORLD_SMTP_PORT),
    ...extra
  }
}

export interface SvcProcess {
  child: ChildProcess
  url: string
  output: () => string
}

/**
 * Starts `svc <args>` as an OS process with `env` (and Node's `nodeFlags`, under `wrapper` when given) and resolves with its URL once it
 * listens (from its JSON log line); the test's teardown stops what is still running.
 * @throws when the process exits before it listens.
 */
export async function startSvc(t: Test, args: string[], env: NodeJS.ProcessEnv, nodeFlags: string[] = [], wrapper: string[] = []): Promise<SvcProcess> {
  // `wrapper`: a command that runs it (as `ip netns exec <name>`: in a network namespace).
  const command = [...wrapper, process.execPath, ...nodeFlags, cli, ...args]
  const child = spawn(command[0], command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stderr!.on('data', (b: Buffer) => {
    out += b.toString()
  })
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    await exited(child)
  })
  const url = await new Promise<string>((resolve, reject) => {
    // 3 s on an idle machine; a loaded CI runner (the crash tests start four at once beside
    // the rest of the suite) has seen more than 30 s before the first log line.
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`svc ${args.join(' ')} did not listen within 60 s (its log must be at level info): ${out.slice(-500)}`))
    }, 60_000)
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString()
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(m[1])
      }
    })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(
        new Error(
          `svc ${args.join(' ')} exited before it listened (${signal !== null ? `signal ${signal}` : `code ${code}`}): ${out.slice(-2_000) || 'it printed nothing'}`
        )
      )
    })
  })
  return { child, url, output: () => out }
}

/** Resolves with the exit code and signal once `child` has exited. */
export async function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, signal: child.signalCode }
  return await new Promise(resolve => child.once('exit', (code, signal) => resolve({ code, signal })))
}

/**
 * The Node.js flags `npm start` runs the service with (`--max-old-space-size`, …), read
 * from package.json's `start` script, so a test meets the heap the service really has.
 */
export function npmStartNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }
  return pkg.scripts.start.split(/\s+/).filter(a => /^--(max-old-space-size|max-semi-space-size|stack-size)=/.test(a))
}
