// Which of the interface's operations, and which of the statuses it lists for each, the
// suite exercises (issue "The test suite as evidence", scope 6). The operation list comes
// from ../shared/spec/service-interface.md (section 4's tables); the app's route table from
// its generated OpenAPI document; what was exercised from the requests every test file
// made through `client()` in this `tap` run (test/support/service.ts records them). This
// file runs after all the others (package.json: tap `serial` on test/zz-coverage). A listed
// status nobody exercised is reported as `todo`, never as a pass.
import t from 'tap'
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { coverageDir, startTestService, testConfig } from '../support/service.ts'

const SPEC = new URL('../../../shared/spec/service-interface.md', import.meta.url)
if (!existsSync(SPEC)) {
  if (process.env.REQUIRE_SHARED === '1') t.fail(`no ${SPEC.pathname}, and REQUIRE_SHARED=1`)
  else t.plan(0, `no ${SPEC.pathname}: the interface document is needed`)
} else {
  await report()
}

interface Operation { method: string, path: string, statuses: number[], pattern: RegExp, params: number }

/** Section 4's rows `| METHOD | /path | … | success | errors |`: the statuses are the 3-digit codes of the last two cells. */
function operations (markdown: string): Operation[] {
  const out: Operation[] = []
  for (const line of markdown.split('\n')) {
    const m = /^\|\s*(GET|POST|PUT|PATCH|DELETE)\s*\|\s*(\/\S*)\s*\|(.*)\|\s*$/.exec(line)
    if (!m) continue
    const cells = m[3].split('|')
    const statuses = [...new Set(cells.slice(-2).join(' ').match(/\b[1-5][0-9]{2}\b/g) ?? [])].map(Number).sort((a, b) => a - b)
    const path = m[2]
    const params = (path.match(/\{[^}]+\}/g) ?? []).length
    const pattern = new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+').replace(/\{[^}]+\}/g, '[^/]+')}$`)
    out.push({ method: m[1], path, statuses, pattern, params })
  }
  return out
}

async function report (): Promise<void> {
  const ops = operations(readFileSync(SPEC, 'utf8'))
  t.equal(ops.length, 63, 'the interface lists 63 operations')

  // The app's route table, as its OpenAPI document (generated from the routes) states it.
  const service = await startTestService(testConfig(t.testdir()))
  const doc = await (await fetch(`${service.url}/openapi.json`)).json() as { paths: Record<string, Record<string, unknown>> }
  await service.close()
  const served = new Set(Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map(m => `${m.toUpperCase()} ${path}`)))

  // What the suite did: every file's records of this run (a directory per tap runner).
  const dir = coverageDir()
  const exchanges: Array<{ method: string, path: string, status: number }> = []
  if (existsSync(dir)) {
    for (const f of readdirSync(dir)) for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) if (line) exchanges.push(JSON.parse(line))
    rmSync(dir, { recursive: true, force: true })
  }
  // The most specific operation a request matches (`/api/users/me` before `/api/users/{uuid}`).
  const byParams = [...ops].sort((a, b) => a.params - b.params)
  const exercised = new Map<Operation, Set<number>>()
  for (const x of exchanges) {
    const op = byParams.find(o => o.method === x.method && o.pattern.test(x.path))
    if (!op) continue
    if (!exercised.has(op)) exercised.set(op, new Set())
    exercised.get(op)!.add(x.status)
  }

  let listed = 0
  let covered = 0
  let implemented = 0
  let touched = 0
  for (const op of ops) {
    const name = `${op.method} ${op.path}`
    const seen = exercised.get(op) ?? new Set<number>()
    listed += op.statuses.length
    if (!served.has(name)) {
      t.fail(`${name}: not in the app's route table`, { todo: 'not implemented yet' })
      continue
    }
    implemented++
    if (seen.size > 0) touched++
    covered += op.statuses.filter(s => seen.has(s)).length
    t.test(name, async t => {
      for (const status of op.statuses) {
        if (seen.has(status)) t.pass(`${status} exercised`)
        else t.fail(`${status} not exercised by the suite`, { todo: true })
      }
      const unlisted = [...seen].filter(s => !op.statuses.includes(s)).sort()
      if (unlisted.length > 0) t.comment(`also answered (not listed in the interface): ${unlisted.join(', ')}`)
    })
  }
  t.comment(`operations: ${ops.length} in the interface, ${implemented} served, ${touched} exercised; listed statuses exercised: ${covered} of ${listed}`)
  if (exchanges.length === 0) t.comment('no exchanges recorded: run the whole suite (`npm test`) for a report')
}
