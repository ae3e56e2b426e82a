// npm run eval: how the service agrees with the public corpora and documents in ../shared
// (read at run time, never copied into the project), each figure against its agreed
// threshold. Exits 1 when a figure is below its threshold or ../shared is missing.
// Usage: npm run eval [-- --shared <dir>] [-- --verbose] [-- --json]
//
// Sections: syntax and typo (the engine's local checks against the syntax and typo
// corpora), webhook signatures (the Stripe-scheme vectors), TOTP (RFC 6238 Appendix B with
// the library the service checks codes with), the interface (every operation of
// service-interface.md section 4 served with its Auth and scope), the result vocabulary
// (every reason of VERIFICATION.md known to the service) and the interface's statuses
// exercised by the last `npm test` run on this machine.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { tmpdir } from 'node:os'
import { parseArgs } from 'node:util'
import { verify as verifyTotp } from 'otplib'
import { pino } from 'pino'
import { parseAddress } from '../src/verifier/syntax.ts'
import { suggestCorrection } from '../src/verifier/typo.ts'
import { signatureHeader, verifySignature } from '../src/lib/webhook-signature.ts'
import { VERDICT_OF } from '../src/verifier/result.ts'
import { loadConfig } from '../src/config.ts'
import { startService } from '../src/main.ts'

const { values } = parseArgs({
  options: { shared: { type: 'string' }, verbose: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } }
})
const shared = resolve(values.shared ?? new URL('../../shared', import.meta.url).pathname)
if (!existsSync(join(shared, 'corpora')) || !existsSync(join(shared, 'spec', 'service-interface.md'))) {
  console.error(
    `error: ${shared} (with corpora/ and spec/service-interface.md) is missing: nothing to evaluate. Put the shared folder beside the checkout, or name it with --shared <dir>.`
  )
  process.exit(1)
}

/** One figure of the report: agreement `ok` of `n`, against `min` (a share, 0–1). */
interface Figure {
  name: string
  ok: number
  n: number
  min: number
  misses: string[]
  note?: string
}
const figures: Figure[] = []
const read = (...parts: string[]): string => readFileSync(join(shared, ...parts), 'utf8')

// ── Syntax ───────────────────────────────────────────────────────────────────────────
{
  interface SyntaxCase {
    address: string
    valid: boolean
    tags: string[]
    note?: string
  }
  const cases = JSON.parse(read('corpora', 'syntax-cases.json')) as SyntaxCase[]
  const misses: string[] = []
  let ok = 0
  for (const c of cases) {
    // A TLD outside the IANA root is syntax-valid but undeliverable: a public-suffix check rightly refuses it (SOURCES.md).
    const expected = c.valid && !c.tags.includes('tld_not_in_iana_root')
    const got = parseAddress(c.address).ok
    if (got === expected) ok++
    else misses.push(`${JSON.stringify(c.address)} expected ${expected ? 'valid' : 'invalid'}, got ${got ? 'valid' : 'invalid'}${c.note ? ` (${c.note})` : ''}`)
  }
  figures.push({ name: 'syntax: syntax-cases.json', ok, n: cases.length, min: 0.995, misses })
}

// ── Typo ─────────────────────────────────────────────────────────────────────────────
{
  interface TypoCase {
    input: string
    suggestion: string | null
    kind: string
  }
  const cases = (JSON.parse(read('corpora', 'typo-cases.json')) as TypoCase[]).filter(c => c.kind === 'email')
  const misses: string[] = []
  let ok = 0
  for (const c of cases) {
    const got = suggestCorrection(c.input)
    if (got === c.suggestion) ok++
    else misses.push(`${c.input}: expected ${c.suggestion ?? 'none'}, got ${got ?? 'none'}`)
  }
  figures.push({ name: 'typo: typo-cases.json', ok, n: cases.length, min: 0.9, misses })
}

// ── Webhook signatures (our header is Stripe's scheme) ───────────────────────────────
{
  const vectors = (JSON.parse(read('corpora', 'webhook-vectors.json')) as any[]).filter(v => String(v.id).startsWith('stripe-'))
  const misses: string[] = []
  let ok = 0
  let n = 0
  for (const v of vectors) {
    const header = v.headers['Stripe-Signature'] as string
    const now = v.verify_at !== undefined ? Number(v.verify_at) : Number(v.timestamp ?? 0)
    n++
    if (verifySignature(header, v.secret, v.payload, now, Number(v.tolerance_seconds ?? 300)).ok === v.valid) ok++
    else misses.push(`${v.id}: expected ${v.valid ? 'accepted' : 'rejected'}`)
    if (v.expected_signature) {
      n++
      if (signatureHeader(v.secret, Number(v.timestamp), v.payload) === `t=${v.timestamp},v1=${v.expected_signature}`) ok++
      else misses.push(`${v.id}: signed differently`)
    }
  }
  figures.push({ name: 'webhook signatures: webhook-vectors.json (Stripe scheme)', ok, n, min: 1, misses })
}

// ── TOTP: RFC 6238 Appendix B with the library the service verifies codes with ───────
{
  const rows = (
    JSON.parse(read('corpora', 'totp-vectors.json')) as {
      rfc6238_appendix_b: Array<{ time: number; mode: string; secret_base32: string; digits: number; totp: string }>
    }
  ).rfc6238_appendix_b
  const misses: string[] = []
  let ok = 0
  for (const r of rows) {
    const got = await verifyTotp({
      secret: r.secret_base32.replace(/=+$/, ''),
      token: r.totp,
      epoch: r.time,
      epochTolerance: 0,
      digits: r.digits,
      algorithm: r.mode.toLowerCase()
    } as Parameters<typeof verifyTotp>[0]).catch(() => ({ valid: false }))
    if (got.valid) ok++
    else misses.push(`${r.mode} at ${r.time}: ${r.totp} refused`)
  }
  figures.push({ name: 'TOTP: totp-vectors.json (RFC 6238 Appendix B, otplib as the service calls it)', ok, n: rows.length, min: 1, misses })
}

// ── The interface: each operation of section 4 served, with its Auth and scope ───────
const spec = read('spec', 'service-interface.md')
interface SpecRow {
  method: string
  path: string
  auth: string
  scope: string | null
  statuses: number[]
}
const rows: SpecRow[] = []
{
  let headingAuth = 'N'
  let header: string[] = []
  for (const line of spec.split('\n')) {
    if (line.startsWith('### ')) {
      headingAuth = /\(Auth (J|A)/.exec(line)?.[1] ?? 'N'
      header = []
      continue
    }
    if (!line.startsWith('|')) continue
    const cells = line
      .split('|')
      .slice(1, -1)
      .map(c => c.trim())
    if (cells[0] === 'Method') {
      header = cells
      continue
    }
    if (!/^(GET|POST|PUT|PATCH|DELETE)$/.test(cells[0])) continue
    const col = (name: string): string => cells[header.indexOf(name)] ?? ''
    const auth = /bearer API key only/.test(col('Request')) ? 'K' : header.includes('Auth') ? col('Auth') : headingAuth
    const statuses = [
      ...new Set(
        cells
          .slice(-2)
          .join(' ')
          .match(/\b[1-5][0-9]{2}\b/g) ?? []
      )
    ]
      .map(Number)
      .sort((a, b) => a - b)
    rows.push({ method: cells[0], path: cells[1], auth, scope: /`([a-z_]+:[a-z_:]+)`/.exec(col('Errors'))?.[1] ?? null, statuses })
  }
}
const dataDir = join(tmpdir(), `svc-eval-${process.pid}`)
const service = await startService(
  loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', SIGNUP_SCREENING: 'lists', VERIFIER_EGRESS_TEST_INTERVAL_S: '0' }),
  {
    logger: pino({ level: 'silent' })
  }
)
const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as {
  paths: Record<string, Record<string, { security?: Array<Record<string, string[]>>; 'x-required-scope'?: string }>>
}
await service.close()
{
  const misses: string[] = []
  let ok = 0
  const AUTH: Record<string, string[]> = { N: [], J: ['session'], A: ['session', 'api_key', 'agent_token'], K: ['api_key'] }
  for (const row of rows) {
    const op = doc.paths[row.path]?.[row.method.toLowerCase()]
    if (!op) {
      misses.push(`${row.method} ${row.path}: not served`)
      continue
    }
    const schemes = [...new Set((op.security ?? []).flatMap(s => Object.keys(s)))].filter(s => s !== 'oauth' && s !== 'refresh_cookie').sort()
    const want = [...AUTH[row.auth]].sort()
    const scopes = new Set((op.security ?? []).flatMap(s => Object.values(s).flat()))
    const why: string[] = []
    if (JSON.stringify(schemes) !== JSON.stringify(want)) why.push(`Auth ${row.auth}: credentials ${schemes.join(', ') || 'none'}`)
    if (row.auth === 'A' && row.scope !== null && !scopes.has(row.scope)) why.push(`scope ${row.scope} not required`)
    if (why.length === 0) ok++
    else misses.push(`${row.method} ${row.path}: ${why.join('; ')}`)
  }
  figures.push({ name: 'interface: operations of section 4 served with their Auth and scope', ok, n: rows.length, min: 1, misses })
}

// ── The result vocabulary: every reason VERIFICATION.md names, with its verdict ───────
{
  const doc = read('design', 'VERIFICATION.md')
  const table = doc.slice(doc.indexOf('### Reasons'), doc.indexOf('Policy:', doc.indexOf('### Reasons')))
  const documented = new Map<string, string>()
  for (const row of table.split('\n')) {
    const m = /^\| (valid|invalid|risky|unknown) \| (.+) \|$/.exec(row.trim())
    if (m) for (const [, reason] of m[2].matchAll(/`([a-z_]+)`/g)) documented.set(reason, m[1])
  }
  const misses: string[] = []
  for (const [reason, verdict] of documented) {
    const ours = (VERDICT_OF as Record<string, string>)[reason]
    if (ours !== verdict) misses.push(`${reason}: ${ours === undefined ? 'not a reason of the service' : `verdict ${ours}, the document says ${verdict}`}`)
  }
  const extra = Object.keys(VERDICT_OF).filter(r => !documented.has(r))
  figures.push({
    name: 'result vocabulary: reasons of VERIFICATION.md known to the service, with their verdicts',
    ok: documented.size - misses.length,
    n: documented.size,
    min: 1,
    misses,
    note: extra.length > 0 ? `the service adds ${extra.join(', ')} (documented in the interface's result vocabulary)` : undefined
  })
}

// ── The interface's statuses exercised by the last test run ──────────────────────────
{
  const root = new URL('../.tap/interface-coverage', import.meta.url).pathname
  const runs = existsSync(root)
    ? readdirSync(root)
        .map(d => join(root, d))
        .filter(d => statSync(d).isDirectory())
        .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)
    : []
  if (runs.length === 0) {
    figures.push({
      name: 'interface statuses exercised by the last npm test run',
      ok: 0,
      n: 0,
      min: 0,
      misses: [],
      note: 'no record of a test run on this machine: run npm test first'
    })
  } else {
    const exchanges: Array<{ method: string; path: string; status: number }> = []
    for (const f of readdirSync(runs[0])) for (const line of readFileSync(join(runs[0], f), 'utf8').split('\n')) if (line) exchanges.push(JSON.parse(line))
    const patterns = rows
      .map(r => ({
        row: r,
        params: (r.path.match(/\{[^}]+\}/g) ?? []).length,
        re: new RegExp(
          `^${r.path
            .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
            .replace(/\\?\{[^}]+\\?\}/g, '[^/]+')
            .replace(/\{[^}]+\}/g, '[^/]+')}$`
        )
      }))
      .sort((a, b) => a.params - b.params)
    const seen = new Map<SpecRow, Set<number>>()
    for (const x of exchanges) {
      const p = patterns.find(p => p.row.method === x.method && p.re.test(x.path))
      if (!p) continue
      if (!seen.has(p.row)) seen.set(p.row, new Set())
      seen.get(p.row)!.add(x.status)
    }
    const misses: string[] = []
    let ok = 0
    let n = 0
    for (const r of rows) {
      for (const s of r.statuses) {
        n++
        if (seen.get(r)?.has(s)) ok++
        else misses.push(`${r.method} ${r.path}: ${s} not exercised`)
      }
    }
    figures.push({
      name: 'interface statuses exercised by the last npm test run',
      ok,
      n,
      min: 1,
      misses,
      note: `${exchanges.length} exchanges recorded in ${runs[0]}`
    })
  }
}

// ── Report ───────────────────────────────────────────────────────────────────────────
const pct = (f: Figure): string => (f.n === 0 ? '—' : `${((100 * f.ok) / f.n).toFixed(1)}%`)
const failing = figures.filter(f => f.n > 0 && f.ok / f.n < f.min)
if (values.json) {
  console.log(
    JSON.stringify(
      {
        figures: figures.map(f => ({
          name: f.name,
          ok: f.ok,
          n: f.n,
          share: f.n === 0 ? null : f.ok / f.n,
          min: f.min,
          passed: !failing.includes(f),
          misses: f.misses,
          note: f.note ?? null
        }))
      },
      null,
      2
    )
  )
} else {
  for (const f of figures) {
    const mark = f.n === 0 ? '·' : failing.includes(f) ? '✗' : '✓'
    console.log(`${mark} ${f.name}: ${f.ok}/${f.n} (${pct(f)}; at least ${(100 * f.min).toFixed(1)}%)${f.note ? ` — ${f.note}` : ''}`)
    if (values.verbose || failing.includes(f) || f.misses.length <= 10)
      for (const m of f.misses.slice(0, values.verbose ? undefined : 40)) console.log(`    ${m}`)
  }
  console.log(failing.length === 0 ? 'eval: every figure at or above its threshold' : `eval: ${failing.length} figure(s) below threshold`)
}
process.exit(failing.length === 0 ? 0 : 1)
