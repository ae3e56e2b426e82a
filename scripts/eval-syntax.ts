// Evaluates the syntax and typo checks against the public corpora in ../shared/corpora
// (read at run time, never copied). Prints agreement and the disagreements.
// Usage: npm run eval [-- --corpora <dir>] [-- --verbose]
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { parseAddress } from '../src/verifier/syntax.ts'
import { suggestCorrection } from '../src/verifier/typo.ts'

const { values } = parseArgs({ options: { corpora: { type: 'string' }, verbose: { type: 'boolean', default: false } } })
const dir = resolve(values.corpora ?? new URL('../../shared/corpora', import.meta.url).pathname)
if (!existsSync(dir)) {
  console.log(`corpora not found at ${dir}; nothing to evaluate`)
  process.exit(0)
}

interface SyntaxCase { address: string, valid: boolean, tags: string[], note?: string }
const cases = JSON.parse(readFileSync(resolve(dir, 'syntax-cases.json'), 'utf8')) as SyntaxCase[]
let agree = 0
const wrong: string[] = []
const byTag = new Map<string, { n: number, ok: number }>()
for (const c of cases) {
  // Cases whose TLD is not in the IANA root are syntax-valid but undeliverable: a
  // public-suffix check rightly rejects them (SOURCES.md), so they are scored as invalid.
  const expected = c.valid && !c.tags.includes('tld_not_in_iana_root')
  const got = parseAddress(c.address).ok
  const ok = got === expected
  if (ok) agree++
  else wrong.push(`${JSON.stringify(c.address)} expected ${expected ? 'valid' : 'invalid'}, got ${got ? 'valid' : 'invalid'}${c.note ? ` (${c.note})` : ''}`)
  for (const tag of c.tags.length > 0 ? c.tags : ['(untagged)']) {
    const s = byTag.get(tag) ?? { n: 0, ok: 0 }
    s.n++; if (ok) s.ok++
    byTag.set(tag, s)
  }
}
const pct = (a: number, b: number): string => `${(100 * a / b).toFixed(1)}%`
console.log(`syntax: ${agree}/${cases.length} agree (${pct(agree, cases.length)})`)
const valid = cases.filter(c => c.valid && !c.tags.includes('tld_not_in_iana_root'))
const validOk = valid.filter(c => parseAddress(c.address).ok).length
console.log(`  valid addresses accepted: ${validOk}/${valid.length}; invalid rejected: ${agree - validOk}/${cases.length - valid.length}`)
for (const [tag, s] of [...byTag].sort()) console.log(`  ${tag.padEnd(24)} ${s.ok}/${s.n}`)
if (values.verbose || wrong.length <= 40) for (const w of wrong) console.log(`  ✗ ${w}`)

interface TypoCase { input: string, suggestion: string | null, kind: string }
const typoFile = resolve(dir, 'typo-cases.json')
if (existsSync(typoFile)) {
  const typos = (JSON.parse(readFileSync(typoFile, 'utf8')) as TypoCase[]).filter(c => c.kind === 'email')
  let ok = 0
  const misses: string[] = []
  for (const c of typos) {
    const got = suggestCorrection(c.input)
    if (got === c.suggestion) ok++
    else misses.push(`${c.input}: expected ${c.suggestion ?? 'none'}, got ${got ?? 'none'}`)
  }
  console.log(`typo: ${ok}/${typos.length} agree (${pct(ok, typos.length)})`)
  for (const m of misses) console.log(`  ✗ ${m}`)
}
