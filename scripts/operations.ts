// The map of the interface: for every operation the routes declare (the OpenAPI document),
// the route file that declares it, the command files it calls and the deciders those
// commands run, or the projection queries a read answers from. Read off the source, so it
// cannot drift: `node scripts/operations.ts` rewrites docs/operation-map.md; the test
// test/scripts/operations.test.ts checks the table against the source and every file in it.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'

const root = new URL('..', import.meta.url).pathname

/** One operation of the interface and the files that carry it out. */
export interface OperationRow {
  method: string
  path: string
  operation_id: string | null
  /** The route file that declares it (repository-relative). */
  route: string
  /** Command files the handler calls (directly or through a helper of the route file). */
  commands: string[]
  /** Decider files those commands run (`src/domain/<aggregate>/decider.ts`, and any other module the commands import from the domain that decides). */
  deciders: string[]
  /** Projection files a read answers from. */
  projections: string[]
}

/** A repository file's text, read once per run (the routes' files are read for every operation). */
const sources = new Map<string, string>()
function source(file: string): string {
  let text = sources.get(file)
  if (text === undefined) sources.set(file, (text = readFileSync(join(root, file), 'utf8')))
  return text
}

interface Import {
  name: string
  file: string
}

const importRe = /import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'(\.{1,2}\/[^']+)'/g
const starRe = /import\s+\*\s+as\s+(\w+)\s+from\s*'(\.{1,2}\/[^']+)'/g

/** The names a file imports from relative modules, with the module's repository-relative path. */
function importsOf(file: string): Import[] {
  const text = source(file)
  const out: Import[] = []
  for (const m of text.matchAll(importRe)) {
    const target = normalize(join(dirname(file), m[2]))
    for (const raw of m[1].split(',')) {
      const name = raw
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop()
      if (name) out.push({ name, file: target })
    }
  }
  for (const m of text.matchAll(starRe)) out.push({ name: m[1], file: normalize(join(dirname(file), m[2])) })
  return out
}

const isDecider = (file: string): boolean => /^src\/domain\/.+\/decider\.ts$/.test(file)
const isAggregate = (file: string): boolean => /^src\/commands\/[^/]+\/aggregate\.ts$/.test(file)

/** An aggregate as its folder binds it: `export const wallets = aggregate('wallet', wallet)`. */
export interface AggregateRow {
  /** The name it is bound under (`wallets`). */
  name: string
  /** Its streams are `<category>-<id>`. */
  category: string
  /** What the id is, from the binding's docstring (`user uuid`), or null. */
  id: string | null
  /** The file that binds it, `src/commands/<aggregate>/aggregate.ts`. */
  file: string
  /** Its decider's file. */
  decider: string
}

/** Every aggregate bound in a `src/commands/<aggregate>/aggregate.ts`, by category. */
export function aggregateRows(): AggregateRow[] {
  const out: AggregateRow[] = []
  const dir = join(root, 'src', 'commands')
  for (const folder of readdirSync(dir).sort()) {
    const file = `src/commands/${folder}/aggregate.ts`
    if (!existsSync(join(root, file))) continue
    const modules = new Map(importsOf(file).map(i => [i.name, i.file]))
    const text = source(file)
    for (const m of text.matchAll(/(?:\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\n)?export const (\w+) = aggregate\('([^']+)', (\w+)/g)) {
      const decider = modules.get(m[4])
      const id = new RegExp(`\`${m[3]}-<([^>]+)>`).exec(m[1] ?? '')?.[1] ?? null
      if (decider !== undefined) out.push({ name: m[2], category: m[3], id, file, decider })
    }
  }
  return out.sort((a, b) => a.category.localeCompare(b.category))
}
const bound = aggregateRows()
const aggregates = new Map(bound.map(a => [a.name, a.decider]))

/**
 * Deciders a command file runs: the aggregates it runs commands on (imported from their
 * `aggregate.ts`) and the domain decider modules it imports, followed through sibling command files.
 */
function decidersOf(commandFile: string, seen = new Set<string>()): string[] {
  if (seen.has(commandFile)) return []
  seen.add(commandFile)
  const found = new Set<string>()
  for (const i of importsOf(commandFile)) {
    if (isAggregate(i.file)) {
      const decider = aggregates.get(i.name)
      if (decider !== undefined && isDecider(decider)) found.add(decider)
    } else if (isDecider(i.file)) found.add(i.file)
    else if (isOperationFile(i.file)) for (const d of decidersOf(i.file, seen)) found.add(d)
  }
  return [...found].sort()
}

/** A file that carries out an operation: a command (`src/commands/<aggregate>/<operation>.ts`) or a flow's entry or binding (`src/flows/<flow>/…`). */
const isOperationFile = (file: string): boolean =>
  (file.startsWith('src/commands/') && !/command-handler|context|aggregate\.ts|\/shared\//.test(file)) ||
  (file.startsWith('src/flows/') && !file.endsWith('/react.ts') && !file.includes('/shared/'))

const toFastify = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1')

interface RouteBlock {
  file: string
  methods: string[]
  /** The path (Fastify's form), or null where it is a variable (a route declared in a loop). */
  url: string | null
  text: string
  /** Where the declaration starts in its file. */
  at: number
}

/** Every `app.route({ method, url, … })` of src/http/routes and src/http/app.ts (health), with its text. */
function routeBlocks(): RouteBlock[] {
  const out: RouteBlock[] = []
  const dir = join(root, 'src', 'http', 'routes')
  const files = [
    ...readdirSync(dir)
      .sort()
      .map(name => `src/http/routes/${name}`),
    'src/http/app.ts'
  ]
  for (const file of files) {
    const text = source(file)
    // A declaration runs from its `.route({` line to the `})` at that line's indentation.
    for (const m of text.matchAll(/^([ \t]*)\S.*\.route\(\{$/gm)) {
      const close = text.indexOf(`\n${m[1]}})`, m.index)
      const part = text.slice(m.index, close < 0 ? undefined : close)
      const method = /method:\s*(\[[^\]]*\]|'[A-Z]+')/.exec(part)?.[1]
      if (!method) continue
      const url = /url:\s*'([^']+)'/.exec(part)?.[1] ?? null
      out.push({ file, url, methods: [...method.matchAll(/'([A-Z]+)'/g)].map(m => m[1]), text: part, at: m.index })
    }
  }
  return out
}

/** A route declared in a loop over a table of paths (`url` a variable): the first such declaration after the file names the path. */
function declaredInLoop(blocks: readonly RouteBlock[], url: string): RouteBlock | undefined {
  for (const b of blocks) {
    if (b.url !== null) continue
    const named = source(b.file).indexOf(`'${url}'`)
    if (named >= 0 && named < b.at && !blocks.some(o => o.file === b.file && o.url === null && o.at < b.at && o.at > named)) return { ...b, url }
  }
  return undefined
}

const OPENS = /(?:[{([]|=>)\s*$/

/**
 * The text of a helper that starts at `start` with indentation `indent`: its first line,
 * and, while a line leaves something open (a brace, a bracket, a parenthesis, an arrow), the
 * lines indented deeper and the closing line at its own indentation (a multi-line signature
 * reopens there: `): T => {`). A one-line arrow function is its line.
 */
function helperText(text: string, start: number, indent: string): string {
  let end = text.indexOf('\n', start)
  if (end < 0) return text.slice(start)
  let open = OPENS.test(text.slice(start, end))
  while (open && end < text.length) {
    const next = text.indexOf('\n', end + 1)
    const line = text.slice(end + 1, next < 0 ? undefined : next)
    const lead = /^[ \t]*/.exec(line)?.[0] ?? ''
    if (line.trim() !== '' && lead.length <= indent.length) {
      if (!/^[\])}]/.test(line.trim())) break
      open = OPENS.test(line)
    }
    end = next < 0 ? text.length : next
  }
  return text.slice(start, end)
}

/** Local functions of a route file that a block calls, for one level of indirection (helperText: where each ends). */
function helperBodies(file: string, block: string): string {
  const text = source(file)
  let extra = ''
  for (const m of text.matchAll(/^([ \t]*)(?:export\s+)?(?:(?:async\s+)?function\s+(\w+)\s*\(|const\s+(\w+)\s*=\s*(?:async\s*)?\()/gm)) {
    const name = m[2] ?? m[3]
    if (new RegExp(`\\b${name}\\(`).test(block)) extra += `${helperText(text, m.index, m[1])}\n`
  }
  return extra
}

/** The table, one row per operation of `document` (an OpenAPI 3.1 document). @throws when an operation has no route file. */
export function operationsTable(document: { paths: Record<string, Record<string, { operationId?: string }>> }): OperationRow[] {
  const blocks = routeBlocks()
  const rows: OperationRow[] = []
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue
      const block = blocks.find(b => b.url === toFastify(path) && b.methods.includes(method.toUpperCase())) ?? declaredInLoop(blocks, toFastify(path))
      if (!block) throw new Error(`${method.toUpperCase()} ${path}: no app.route in src/http/routes declares it`)
      const body = block.text
      const once = body + helperBodies(block.file, body)
      const text = once + helperBodies(block.file, once)
      const imports = importsOf(block.file)
      const called = imports.filter(i => new RegExp(`\\b${i.name}(\\s*\\(|\\.)`).test(text))
      const commands = [...new Set(called.filter(i => isOperationFile(i.file)).map(i => i.file))].sort()
      const projections = [...new Set(called.filter(i => i.file.startsWith('src/projections/')).map(i => i.file))].sort()
      const deciders = [...new Set(commands.flatMap(c => decidersOf(c)))].sort()
      rows.push({ method: method.toUpperCase(), path, operation_id: op.operationId ?? null, route: block.file, commands, deciders, projections })
    }
  }
  return rows.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method))
}

/** docs/operation-map.md for `rows` and the aggregates bound today. */
export function operationsMarkdown(rows: readonly OperationRow[], aggregates: readonly AggregateRow[] = bound): string {
  const link = (f: string): string => `[\`${f.replace(/^src\//, '')}\`](${relative('docs', f)})`
  const lines = [
    '# Where each operation is carried out',
    '',
    'Generated by `node scripts/operations.ts` from the routes and their imports (checked by',
    '`test/scripts/operations.test.ts`): for every operation of the interface, the route file',
    'that declares it, the command and flow files it calls (`src/commands/<aggregate>/<operation>.ts`, `src/flows/<flow>/`),',
    'the deciders those commands run, and the projections a read answers from.',
    '',
    '| Operation | Route | Commands | Deciders | Projections |',
    '|---|---|---|---|---|'
  ]
  for (const r of rows) {
    lines.push(
      `| \`${r.method} ${r.path}\` | ${link(r.route)} | ${r.commands.map(link).join('<br>') || '—'} | ${r.deciders.map(link).join('<br>') || '—'} | ${r.projections.map(link).join('<br>') || '—'} |`
    )
  }
  lines.push(
    '',
    '## Aggregates and their streams',
    '',
    "Each aggregate is bound once, in its folder's `aggregate.ts` (`src/commands/<aggregate>/aggregate.ts`):",
    'its handler runs commands on the streams `<category>-<id>`. Streams keyed by a value that must stay',
    'unique across accounts (idempotency keys, e-mail claims) are named beside their commands.',
    '',
    '| Stream | Handler | Bound in | Decider |',
    '|---|---|---|---|'
  )
  for (const a of aggregates) lines.push(`| \`${a.category}-<${a.id ?? 'id'}>\` | \`${a.name}\` | ${link(a.file)} | ${link(a.decider)} |`)
  return `${lines.join('\n')}\n`
}

/** One operation file whose names disagree, and how. */
export interface NameDisagreement {
  file: string
  problem: string
}

const camelOf = (kebab: string): string => kebab.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
const pascalOf = (kebab: string): string => camelOf(kebab).replace(/^./, c => c.toUpperCase())

/**
 * Commands of the aggregates whose streams are steps every flow composes: the wallet's
 * reservation, capture, release and grant, a value's claim and an idempotency key's. A file
 * may send these beside its own command (or alone, when it is a flow's step) without
 * being named after them.
 */
const STEP_DECIDERS = ['src/domain/wallet/decider.ts', 'src/domain/claim/decider.ts', 'src/domain/idempotency/decider.ts']

/** The command types a decider file accepts: the `type: '…'` of its `export type …Command =` union. */
function commandsOf(dir: string, decider: string): string[] {
  const text = readFileSync(join(dir, decider), 'utf8')
  const out: string[] = []
  for (const m of text.matchAll(/^export type \w+Command =([\s\S]*?)(?=\n\n|\nexport )/gm)) for (const c of m[1].matchAll(/type: '([A-Z]\w+)'/g)) out.push(c[1])
  return out
}

/** Files of `src/commands/<aggregate>/` and `src/flows/<flow>/` that are not operations: the binding, the cross-aggregate reads, a flow's binding and reactor, and helpers under `shared/`. */
const NOT_OPERATIONS = new Set(['aggregate.ts', 'read.ts', 'flow.ts', 'react.ts'])

/**
 * Where an operation's names disagree. One concept has one name: the file
 * `src/commands/<aggregate>/<operation>.ts` (or `src/flows/<flow>/<operation>.ts`) exports
 * the function `<operation>` in camelCase; the commands it sends to deciders (other than the
 * step commands of STEP_DECIDERS) include `<Operation>` in PascalCase; and every error code it
 * throws literally (`new DomainError(kind, '<prefix>.<reason>', …)`) has the prefix
 * `<operation>` in snake_case, or the name of a resource (an aggregate's folder or stream
 * category, or `account`: `batch.not_found`, `subscription.unknown_plan`), shared by the
 * operations on it. The public error codes are the API: where they disagree, the file and
 * command follow them. Helpers live in a folder's `shared/` or in `src/domain/`.
 * @param dir the repository's root (a fixture's, in the test).
 * @returns one row per disagreement, none when the names agree.
 */
export function nameDisagreements(dir: string = root): NameDisagreement[] {
  const out: NameDisagreement[] = []
  const deciders = readdirSync(join(dir, 'src', 'domain'), { withFileTypes: true })
    .filter(d => d.isDirectory() && existsSync(join(dir, 'src', 'domain', d.name, 'decider.ts')))
    .map(d => `src/domain/${d.name}/decider.ts`)
  const steps = new Set(STEP_DECIDERS.filter(d => existsSync(join(dir, d))).flatMap(d => commandsOf(dir, d)))
  const commands = new Set(deciders.flatMap(d => commandsOf(dir, d)))
  const resources = new Set(['account'])
  for (const d of deciders) resources.add(d.split('/')[2].replace(/-/g, '_'))
  for (const top of ['commands', 'flows']) {
    const topDir = join(dir, 'src', top)
    if (!existsSync(topDir)) continue
    for (const folder of readdirSync(topDir, { withFileTypes: true })) {
      if (!folder.isDirectory()) continue
      resources.add(folder.name.replace(/-/g, '_'))
      const names = readdirSync(join(topDir, folder.name)).sort()
      // A flow's operations share its codes: a batch created with its first chunk refuses that chunk as `add_chunk` does.
      const siblings = new Set(top === 'flows' ? names.filter(n => n.endsWith('.ts')).map(n => n.slice(0, -3).replace(/-/g, '_')) : [])
      for (const name of names) {
        if (!name.endsWith('.ts') || NOT_OPERATIONS.has(name)) continue
        const file = `src/${top}/${folder.name}/${name}`
        const op = name.slice(0, -3)
        const text = readFileSync(join(dir, file), 'utf8')
        const exported = [...text.matchAll(/^export (?:async )?function (\w+)/gm)].map(m => m[1])
        if (!exported.includes(camelOf(op))) out.push({ file, problem: `exports no function ${camelOf(op)} (it exports ${exported.join(', ') || 'none'})` })
        const sent = [...new Set([...text.matchAll(/\btype: '([A-Z]\w+)'/g)].map(m => m[1]))].filter(c => commands.has(c) && !steps.has(c))
        if (sent.length > 0 && !sent.includes(pascalOf(op))) out.push({ file, problem: `sends ${sent.join(', ')}, not ${pascalOf(op)}` })
        for (const m of text.matchAll(/DomainError\(\s*'[a-z_]+',\s*'([a-z_]+)\.[a-z_]+'/g))
          if (m[1] !== op.replace(/-/g, '_') && !resources.has(m[1]) && !siblings.has(m[1]))
            out.push({ file, problem: `throws ${m[1]}.* codes, not ${op.replace(/-/g, '_')}.*` })
      }
    }
  }
  return out.filter((d, i) => out.findIndex(o => o.file === d.file && o.problem === d.problem) === i)
}

if (import.meta.main) {
  const { openapiDocument } = await import('./openapi.ts')
  const rows = operationsTable((await openapiDocument()) as never)
  writeFileSync(join(root, 'docs', 'operation-map.md'), operationsMarkdown(rows))
  const missing = rows.flatMap(r => [r.route, ...r.commands, ...r.deciders, ...r.projections]).filter(f => !existsSync(join(root, f)))
  process.stderr.write(`operations: ${rows.length} operations in docs/operation-map.md; ${missing.length} missing files\n`)
  for (const d of nameDisagreements()) process.stderr.write(`operations: ${d.file} ${d.problem}\n`)
}
