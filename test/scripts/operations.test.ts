// Every operation of the interface maps to its route, its command files and its deciders,
// every file named exists, and docs/operation-map.md is the table the source gives today.
import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { openapiDocument } from '../../scripts/openapi.ts'
import { operationsMarkdown, operationsTable } from '../../scripts/operations.ts'

const root = new URL('../..', import.meta.url).pathname
/** Operations answered without a write, though not by GET: a price estimate, a sign-up screening, the MCP transport's reads. */
const READS_BY_POST = new Set(['POST /api/batches/estimate', 'POST /api/auth/signup-preview'])

t.test('every operation of the interface has its route, commands and deciders, and every file exists', async t => {
  const document = (await openapiDocument()) as { paths: Record<string, Record<string, { operationId?: string }>> }
  const declared = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter(m => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
      .map(m => `${m.toUpperCase()} ${path}`)
  )
  const rows = operationsTable(document)
  t.same(rows.map(r => `${r.method} ${r.path}`).sort(), declared.sort(), 'one row per operation of the document')
  t.ok(rows.length >= 70, `the document has the interface's operations (${rows.length})`)
  for (const r of rows) {
    const name = `${r.method} ${r.path}`
    for (const f of [r.route, ...r.commands, ...r.deciders, ...r.projections]) t.ok(existsSync(join(root, f)), `${name}: ${f} exists`)
    if (r.method !== 'GET' && !READS_BY_POST.has(name)) {
      t.ok(r.commands.length > 0, `${name} calls a command`)
      t.ok(r.deciders.length > 0, `${name} runs a decider`)
      for (const c of r.commands) t.match(c, /^src\/commands\/[a-z-]+\/[a-z-]+\.ts$/, `${name}: ${c} is src/commands/<aggregate>/<operation>.ts`)
    }
  }
  t.equal(
    readFileSync(join(root, 'docs', 'operation-map.md'), 'utf8'),
    operationsMarkdown(rows),
    'docs/operation-map.md is up to date (node scripts/operations.ts)'
  )
})
