import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { FLOWS } from '../../src/flows/index.ts'

// docs/architecture.md's table of flows is the one the source has: a row for every folder
// of src/flows/, and every flow the worker runs named there with its triggers, its steps'
// fault points and its bound. The oracle: the document as written, read against the tree.

const root = new URL('../..', import.meta.url).pathname
const doc = readFileSync(`${root}docs/architecture.md`, 'utf8')
const table = doc.slice(doc.indexOf('| flow (`src/flows/…`)'), doc.indexOf('**Crash tests.**'))
const rows = table.split('\n').filter(l => l.startsWith('| `'))

t.test('every folder of src/flows has its row', async t => {
  const folders = readdirSync(`${root}src/flows`, { withFileTypes: true })
    .filter(d => d.isDirectory())
    .map(d => d.name)
  t.ok(folders.length >= 10, `${folders.length} folders`)
  for (const f of folders)
    t.ok(
      rows.some(r => r.split('|')[1].includes(`\`${f}\``)),
      `${f} has a row`
    )
})

t.test('every flow the worker runs: its triggers, its fault points and its bound', async t => {
  for (const flow of FLOWS) {
    const row = rows.find(r => r.includes(`\`${flow.name}\``))
    t.ok(row, `${flow.name} has a row`)
    for (const trigger of flow.triggers) t.ok(row?.includes(`\`${trigger}\``), `${flow.name}: trigger ${trigger}`)
    t.ok(row?.includes(`| ${flow.bound_ms / 1000} s |`), `${flow.name}: bound ${flow.bound_ms / 1000} s`)
    for (const step of flow.steps) t.ok(doc.includes(`\`${flow.prefix}.after_${step}\``), `${flow.name}: fault point ${flow.prefix}.after_${step} listed`)
  }
})
