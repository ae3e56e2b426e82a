// The console's words against what the service can say: every verdict, reason, flag, check and outcome of the result vocabulary, every
// notification kind, ledger entry type, job and batch status, webhook disabled reason and
// egress problem (why live checks are held)
// has its words in English and in French; the two catalogues have the same keys and the
// same `{placeholders}` in each sentence. The oracles: the service's own enumerations
// (the vocabulary, the projections' kinds, the document's enums), not the console's code.
import t from 'tap'
import { en } from '../../web/src/messages/en.ts'
import { fr } from '../../web/src/messages/fr.ts'
import { PROBLEM_TITLES_FR } from '../../web/src/messages/problems-fr.ts'
import { PROBLEM_REASONS } from '../../src/http/problem-types.ts'
import { CHECK_OUTCOMES, CHECKS, FLAGS, REASONS, VERDICTS } from '../../src/verifier/vocabulary.ts'
import { NOTIFICATION_KINDS } from '../../src/projections/notifications.ts'
import { EGRESS_PROBLEMS } from '../../src/verifier/egress-monitor.ts'
import { openapiDocument } from '../../scripts/openapi.ts'

const document = (await openapiDocument()) as { components: { schemas: Record<string, { properties?: Record<string, { enum?: string[] }> }> } }
const enumOf = (schema: string, property: string): string[] => {
  const values = document.components.schemas[schema]?.properties?.[property]?.enum
  if (!values) throw new Error(`no enum ${schema}.${property} in the document`)
  return values
}

t.test('every term the service can answer has its words', async t => {
  const needed: string[] = [
    ...Object.keys(VERDICTS).flatMap(v => [`verdict.${v}`, `action.${v}`]),
    ...Object.keys(REASONS).flatMap(r => [`reason.${r}`, `why.${r}`]),
    ...Object.keys(FLAGS).map(f => `flag.${f}`),
    ...Object.keys(CHECKS).map(c => `check.${c}`),
    ...Object.keys(CHECK_OUTCOMES).map(o => `outcome.${o}`),
    ...NOTIFICATION_KINDS.map(k => `notice.${k}`),
    ...enumOf('WalletTransaction', 'transaction_type').map(x => `tx.${x}`),
    ...enumOf('Job', 'status').map(s => `job.status.${s}`),
    ...enumOf('Batch', 'status').map(s => `batch.${s}`),
    ...EGRESS_PROBLEMS.map(p => `held.why.${p}`),
    ...['requested', 'consecutive_failures', 'gone'].map(r => `webhooks.disabled.${r}`),
    ...enumOf('WebhookEndpoint', 'status').map(s => `webhooks.state.${s}`),
    ...enumOf('Subscription', 'status').map(s => `subscription.${s}`)
  ]
  t.ok(needed.length > 80, `${needed.length} terms`)
  t.same(
    needed.filter(k => !(k in en)),
    [],
    'English has every one'
  )
  t.same(
    needed.filter(k => !(k in fr)),
    [],
    'French has every one'
  )
})

t.test('English and French: the same keys, the same placeholders, no sentence left in English', async t => {
  t.same(Object.keys(fr).sort(), Object.keys(en).sort())
  const holes = (s: string): string[] => [...s.matchAll(/\{(\w+)\}/g)].map(m => m[1]).sort()
  const differing = Object.keys(en).filter(k => JSON.stringify(holes(en[k as keyof typeof en])) !== JSON.stringify(holes(fr[k as keyof typeof fr])))
  t.same(differing, [], 'each sentence fills the same values in both')
  // Names that are the same in both languages (proper names, technical terms) are the only equal texts.
  const TERMS = new Set(['check.dns'])
  const same = Object.keys(en).filter(
    k => !TERMS.has(k) && en[k as keyof typeof en] === fr[k as keyof typeof fr] && en[k as keyof typeof en].split(' ').length > 1
  )
  t.same(same, [], 'no multi-word sentence untranslated')
})

t.test('French punctuation: a narrow no-break space before : ; ? ! (never a plain space, which can break the line there)', async t => {
  const plain = Object.entries(fr).filter(([, text]) => / [:;?!](?!\/\/)/.test(text))
  t.same(
    plain.map(([key]) => key),
    [],
    'no plain space before high punctuation'
  )
  t.match(fr['result.action'], /\u202f:$/, 'the label before what to do carries its colon, after its space (the card adds none)')
  t.match(en['result.action'], /[^ ]:$/, 'and in English, no space before it')
})

t.test('every problem reason the API can answer has its French title', async t => {
  t.same(Object.keys(PROBLEM_TITLES_FR).sort(), Object.keys(PROBLEM_REASONS).sort(), 'the same reasons as the table of problems')
  t.same(
    Object.entries(PROBLEM_TITLES_FR)
      .filter(([reason, title]) => title === PROBLEM_REASONS[reason].title && title.split(' ').length > 1)
      .map(([reason]) => reason),
    [],
    'none left in English'
  )
})
