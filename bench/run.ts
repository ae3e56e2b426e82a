// `npm run bench`: the engine benchmark, then the bus benchmark, each measured in one run.
// With --json, one JSON object: { engine: …, bus: … }.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

const run = promisify(execFile)
const args = process.argv.slice(2)
const json = args.includes('--json')
const here = (f: string): string => new URL(f, import.meta.url).pathname
const engineArgs = args.filter(a => a !== '--json')
if (json) {
  const [engine, bus] = [
    await run(process.execPath, [here('./engine.ts'), ...engineArgs, '--json'], { maxBuffer: 1 << 26 }),
    await run(process.execPath, [here('./bus.ts'), '--json'], { maxBuffer: 1 << 26 })
  ]
  console.log(JSON.stringify({ engine: JSON.parse(engine.stdout), bus: JSON.parse(bus.stdout) }))
} else {
  for (const [file, a] of [['./engine.ts', engineArgs], ['./bus.ts', []]] as const) {
    const r = await run(process.execPath, [here(file), ...a], { maxBuffer: 1 << 26 })
    process.stdout.write(r.stdout)
  }
}
