// `npm run bench`: the engine (and bulk through the API), bus, rate-limit, write-side, durability, appends (SQLite and PostgreSQL), read-side and
// batch-intake benchmarks, the timing side channels and the console's Lighthouse budgets, a million-row list file through svc verify-file, submissions against a bare route and submissions on SQLite and PostgreSQL with one and two API processes (scale-out), each measured in one run, then the three ratios with goals (submissions, rebuild, engine). With --json, one JSON object: { engine, bus, rate_limit, write_side, durability, appends, read_side, batch_intake, timing, console, list_file, submissions, scale_out }.
// `--engine-only` skips the engine's slow one-connection mode; `--jobs N` sizes the
// account history of the write and read sides (default 1,000,000).
import { spawn } from 'node:child_process'
import { goalsSummary } from './goals.ts'

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
  ['durability', './durability.ts', []],
  ['appends', './appends.ts', []],
  ['read_side', './read-side.ts', writeArgs],
  ['batch_intake', './batch-intake.ts', []],
  ['timing', './timing.ts', []],
  ['console', './console.ts', []],
  ['list_file', './list-file.ts', []],
  ['submissions', './submissions.ts', []],
  ['scale_out', './scale-out.ts', []]
]
if (json) {
  const out: Record<string, unknown> = {}
  for (const [name, file, a] of benches) out[name] = JSON.parse(await run(here(file), [...a, '--json']))
  console.log(JSON.stringify(out))
} else {
  // The three whose ratios have goals run for their figures, said at the end.
  const figures: Record<string, any> = {}
  for (const [name, file, a] of benches) {
    if (name === 'engine' || name === 'read_side' || name === 'submissions') {
      figures[name] = JSON.parse(await run(here(file), [...a, '--json']))
      process.stdout.write(`${name}: ${JSON.stringify(figures[name])}\n`)
    } else process.stdout.write(await run(here(file), a))
  }
  console.log(goalsSummary(figures))
}
