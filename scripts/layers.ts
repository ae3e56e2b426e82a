// The layer rules (../shared/design/layers.json, docs/architecture.md) checked by
// dependency-cruiser over src/: which part may import which, no import circle, no
// collection named outside src/projections. Exit 1 with one line per violation.
//
// dependency-cruiser reads TypeScript through TypeScript 5's compiler API; the service
// is type-checked with TypeScript 7, which has none. The tools/layers workspace holds
// TypeScript 5, and a resolution hook hands it to dependency-cruiser alone.
import { registerHooks } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

// `node scripts/layers.ts [dir]`: the rules over `dir/src` (default: this checkout's), as
// their test does with a small tree that breaks one rule.
const repo = new URL('..', import.meta.url).pathname
const root = process.argv[2] ?? repo
process.chdir(root)
const typescript5 = join(repo, 'tools', 'layers', 'node_modules', 'typescript')
registerHooks({
  resolve(specifier, context, next) {
    if ((specifier === 'typescript' || specifier.startsWith('typescript/')) && context.parentURL?.includes('/dependency-cruiser/')) {
      const rest = specifier === 'typescript' ? 'lib/typescript.js' : specifier.slice('typescript/'.length)
      return { url: pathToFileURL(join(typescript5, rest)).href, format: rest.endsWith('.json') ? 'json' : 'commonjs', shortCircuit: true }
    }
    return next(specifier, context)
  }
})

const { cruise } = await import('dependency-cruiser')
const { default: config } = await import(pathToFileURL(join(repo, '.dependency-cruiser.cjs')).href)
const started = performance.now()
const result = await cruise([join(root, 'src')], { ...config.options, ruleSet: { forbidden: config.forbidden }, validate: true, outputType: 'err-long' })
const summary = typeof result.output === 'string' ? result.output : JSON.stringify(result.output)
process.stdout.write(summary)

// A collection is named where `.collection(...)` is called on the read store or a
// `CollectionSpec` is written: only src/projections (and the machinery that applies
// them, the adapters and ports that define them) may.
const { readdirSync, readFileSync } = await import('node:fs')
const { relative } = await import('node:path')
const naming = /\.collection\s*[<(]|\bCollectionSpec\b/
let named = 0
for (const entry of readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.ts')) continue
  const file = relative(root, join(entry.parentPath, entry.name))
  if (/^src\/(projections|eventsourcing|infra|ports)\//.test(file)) continue
  readFileSync(join(root, file), 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!naming.test(line)) return
      named += 1
      process.stdout.write(`  error collections-named-by-projections: ${file}:${i + 1} names a collection outside src/projections\n`)
    })
}
process.stderr.write(`layers: ${Math.round(performance.now() - started)} ms\n`)
process.exit(result.exitCode === 0 && named === 0 ? 0 : 1)
