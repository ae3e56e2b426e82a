// Every operation of the interface maps to its route, its command files and its deciders,
// every file named exists, and docs/operation-map.md is the table the source gives today.
import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { openapiDocument } from '../../scripts/openapi.ts'
import { aggregateRows, nameDisagreements, operationsMarkdown, operationsTable } from '../../scripts/operations.ts'

const root = new URL('../..', import.meta.url).pathname
/** Operations answered without a write, though not by GET: a price estimate, a sign-up screening, a list file's preview (a body too large for a query), the MCP transport's reads. */
const READS_BY_POST = new Set(['POST /api/batches/estimate', 'POST /api/auth/signup-preview', 'POST /api/lists/preview'])

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
      for (const c of r.commands)
        t.match(c, /^src\/(commands|flows)\/[a-z-]+\/[a-z-]+\.ts$/, `${name}: ${c} is src/commands/<aggregate>/<operation>.ts or src/flows/<flow>/<file>.ts`)
    }
  }
  // Precision, against the interface rather than the script: a read writes nothing, and a
  // write names the operation's own command, not its neighbours' in the same route file.
  const byName = new Map(rows.map(r => [`${r.method} ${r.path}`, r]))
  for (const r of rows) {
    // The one command file a read calls checks a redirect URI against the registered client (RFC 8252 §7.3); it appends nothing.
    if (r.method === 'GET')
      t.same(
        r.commands.filter(c => c !== 'src/commands/oauth/check-authorization.ts'),
        [],
        `GET ${r.path} calls no command`
      )
  }
  const exact: Record<string, string[]> = {
    'DELETE /api/keys/{uuid}': ['src/commands/api-key/revoke-api-key.ts'],
    'PATCH /api/keys/{uuid}': ['src/commands/api-key/update-api-key.ts'],
    'PATCH /api/users/{uuid}/password': ['src/flows/revoke-sessions/change-password.ts'],
    'DELETE /api/users/{uuid}': ['src/flows/delete-account/delete-user.ts'],
    'PATCH /api/webhooks/{uuid}': ['src/commands/webhook/update-webhook.ts'],
    'POST /api/batches': ['src/flows/batch-submission/create-batch.ts'],
    // A helper of the route file: a sign-in ends the session its cookie named (sign-in.ts endReplacedSession).
    'POST /api/auth/login': ['src/commands/session/refresh.ts', 'src/commands/session/revoke-session.ts', 'src/flows/sign-in/login.ts']
  }
  for (const [name, commands] of Object.entries(exact)) t.same(byName.get(name)?.commands, commands, `${name}: exactly its commands`)
  t.equal(
    readFileSync(join(root, 'docs', 'operation-map.md'), 'utf8'),
    operationsMarkdown(rows),
    'docs/operation-map.md is up to date (node scripts/operations.ts)'
  )
})

t.test('every aggregate is bound once, in its folder, with its streams named', async t => {
  const aggregates = aggregateRows()
  // The interface's write side: accounts, wallets, sessions, jobs, batches and their files, keys, agents, webhooks and their deliveries, notifications, plans, OAuth clients and codes, Stripe events.
  t.equal(aggregates.length, 15, 'fifteen aggregates')
  t.equal(new Set(aggregates.map(a => a.category)).size, aggregates.length, 'no two share a stream category')
  for (const a of aggregates) {
    t.match(a.file, /^src\/commands\/[a-z-]+\/aggregate\.ts$/, `${a.name} is bound in its folder`)
    t.ok(a.id, `${a.name}: its docstring names the id of \`${a.category}-<id>\``)
    t.ok(existsSync(join(root, a.decider)), `${a.name}: ${a.decider} exists`)
  }
  t.same(
    aggregates.find(a => a.name === 'wallets'),
    { name: 'wallets', category: 'wallet', id: 'user uuid', file: 'src/commands/wallet/aggregate.ts', decider: 'src/domain/wallet/decider.ts' },
    'the wallet: wallet-<user uuid>, as the ledger audit reads it'
  )
})

t.test('an operation has one name: its file, its function, its command and its error codes', async t => {
  t.same(nameDisagreements(), [], 'every file of src/commands/<aggregate>/ and src/flows/<flow>/ agrees (node scripts/operations.ts lists any)')
})

t.test('the name check reports each kind of disagreement, and only those', async t => {
  const dir = t.testdir({
    src: {
      domain: {
        wallet: { 'decider.ts': "export type WalletCommand =\n  | { type: 'ReserveTokens'; data: {} }\n\nexport const x = 1\n" },
        thing: {
          'decider.ts':
            "export type ThingCommand =\n  | { type: 'MakeThing'; data: {} }\n  | { type: 'BreakThing'; data: {} }\n  | { type: 'PaintThing'; data: {} }\n\nexport function decide() {}\n"
        }
      },
      commands: {
        thing: {
          'aggregate.ts': "export const things = aggregate('thing', thing)\n",
          'read.ts': 'export async function readThing() {}\n',
          // Agrees: its function, its command (beside a wallet step), its code and a resource's code.
          'make-thing.ts':
            "export async function makeThing() {\n  await h({ type: 'MakeThing', data: {} })\n  await w({ type: 'ReserveTokens', data: {} })\n  throw new DomainError('invalid', 'make_thing.bad', 'x')\n  throw new DomainError('not_found', 'thing.not_found', 'x')\n}\n",
          // Exports another name.
          'break-thing.ts': "export async function breakIt() {\n  await h({ type: 'BreakThing', data: {} })\n}\n",
          // Sends another operation's command, and throws another operation's code.
          'paint-thing.ts':
            "export async function paintThing() {\n  await h({ type: 'BreakThing', data: {} })\n  throw new DomainError('invalid', 'colour_thing.bad', 'x')\n}\n",
          shared: { 'helper.ts': 'export function helps() {}\n' }
        }
      },
      flows: {
        'thing-flow': {
          'flow.ts': 'export const flow = 1\n',
          'react.ts': 'export function react() {}\n',
          // A flow's operations share its codes.
          'start-thing.ts': "export async function startThing() {\n  throw new DomainError('invalid', 'finish_thing.bad', 'x')\n}\n",
          'finish-thing.ts': 'export async function finishThing() {}\n'
        }
      }
    }
  })
  t.same(nameDisagreements(dir), [
    { file: 'src/commands/thing/break-thing.ts', problem: 'exports no function breakThing (it exports breakIt)' },
    { file: 'src/commands/thing/paint-thing.ts', problem: 'sends BreakThing, not PaintThing' },
    { file: 'src/commands/thing/paint-thing.ts', problem: 'throws colour_thing.* codes, not paint_thing.*' }
  ])
})
