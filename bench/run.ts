// `npm run bench`: the engine (and bulk through the API), bus, rate-limit, write-side, read-side and
// batch-intake benchmarks, the timing side channels and the console's Lighthouse budgets and a million-row list file through svc verify-file, each measured in one run. With --json, one JSON object: { engine, bus, rate_limit, write_side, read_side, batch_intake, timing, console, list_file }.
// `--engine-only` skips the engine's slow one-connection mode; `--jobs N` sizes the
// account history of the write and read sides (default 1,000,000).
import { spawn } from 'node:child_process'

/** Runs one benchmark: its progress streams to stderr, its stdout comes back. @throws on a non-zero exit. */
async function run(file: string, a: string[]): Promise<string> {
  const child = spawn(process.execPath, [file, ...a], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString()
  })
  const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
  if (code !== 0) throw new Error(`${file} exited with ${code}`)
  return out
}
const args = process.argv.slice(2)
const json = args.includes('--json')
const here = (f: string): string => new URL(f, import.meta.url).pathname
const jobsAt = args.indexOf('--jobs')
const writeArgs = jobsAt >= 0 ? ['--jobs', args[jobsAt + 1]] : []
const engineArgs = args.filter((a, i) => a !== '--json' && i !== jobsAt && i !== jobsAt + 1)
const benches: Array<[string, string, string[]]> = [
  ['engine', './engine.ts', engineArgs],
  ['bus', './bus.ts', []],
  ['rate_limit', './rate-limit.ts', []],
  ['write_side', './write-side.ts', writeArgs],
  ['read_side', './read-side.ts', writeArgs],
  ['batch_intake', './batch-intake.ts', []],
  ['timing', './timing.ts', []],
  ['console', './console.ts', []],
  ['list_file', './list-file.ts', []]
]
if (json) {
  const out: Record<string, unknown> = {}
  for (const [name, file, a] of benches) out[name] = JSON.parse(await run(here(file), [...a, '--json']))
  console.log(JSON.stringify(out))
} else {
  for (const [, file, a] of benches) process.stdout.write(await run(here(file), a))
}
