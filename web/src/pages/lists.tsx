import { useEffect, useMemo, useState, type ReactNode } from 'react'
import { Button, ProgressBar, Label } from 'react-aria-components'
import { Link, useLocation } from 'wouter'
import Papa from 'papaparse'
import { api, download, type Schemas } from '../api.ts'
import { useI18n } from '../i18n.tsx'
import { ApiCall, PageTitle, ProblemAlert, VerdictBadge, failureOf, useLoad, type Failure, scrollable } from '../ui.tsx'
import { Choice } from './overview.tsx'

type Batch = Schemas['Batch']
const ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** A file read in the browser: its rows (a header row when the first row names columns), its columns, and the column that holds addresses. */
interface Parsed { name: string, header: string[], rows: string[][], column: number }

/** Reads a CSV, TSV or text file (papaparse: delimiter, quoting and BOM detected) and finds the column whose values look most like addresses. */
async function parseFile (file: File): Promise<Parsed> {
  const text = (await file.text()).replace(/^\uFEFF/, '')
  const result = Papa.parse<string[]>(text, { skipEmptyLines: 'greedy' })
  const all = result.data.filter(r => r.some(c => c.trim() !== ''))
  const width = Math.max(1, ...all.map(r => r.length))
  const firstLooksLikeData = (all[0] ?? []).some(c => ADDRESS.test(c.trim()))
  const header = firstLooksLikeData ? Array.from({ length: width }, (_, i) => `column ${i + 1}`) : Array.from({ length: width }, (_, i) => (all[0]?.[i] ?? '').trim() || `column ${i + 1}`)
  const rows = firstLooksLikeData ? all : all.slice(1)
  const score = Array.from({ length: width }, (_, i) => rows.slice(0, 500).filter(r => ADDRESS.test((r[i] ?? '').trim())).length)
  return { name: file.name, header, rows, column: Math.max(0, score.indexOf(Math.max(...score))) }
}

/** A batch as it runs: progress, results by verdict, tokens, and the results to download. */
function BatchView ({ uuid }: { uuid: string }): ReactNode {
  const { t, formatNumber } = useI18n()
  const [batch, setBatch] = useState<Batch | null>(null)
  const [failure, setFailure] = useState<Failure | null>(null)
  useEffect(() => {
    let live = true
    const poll = async (): Promise<void> => {
      while (live) {
        const r = await api.GET('/api/batches/{uuid}', { params: { path: { uuid } } })
        if (!live) return
        if (!r.data) { setFailure(failureOf(r.error, r.response)); return }
        setBatch(r.data)
        if (r.data.status === 'completed') return
        await new Promise(resolve => setTimeout(resolve, 1_000))
      }
    }
    void poll()
    return () => { live = false }
  }, [uuid])
  if (failure) return <ProblemAlert problem={failure.problem} />
  if (!batch) return <p role="status">{t('app.loading')}</p>
  const done = batch.progress.total === 0 ? 100 : Math.round(100 * batch.progress.processed / batch.progress.total)
  return (
    <section className="card" aria-labelledby="batch-h" data-testid="batch">
      <h2 id="batch-h">{batch.name ?? batch.uuid}</h2>
      <ProgressBar value={done} aria-label={t('lists.progress')}>
        {({ percentage }) => <><Label>{t('lists.progress')}: {formatNumber(batch.progress.processed)} / {formatNumber(batch.progress.total)} ({Math.round(percentage ?? 0)} %)</Label><div className="bar"><div className="fill" style={{ width: `${percentage ?? 0}%` }} /></div></>}
      </ProgressBar>
      <p role="status" aria-live="polite">{t(`batch.${batch.status}` as 'batch.completed')}</p>
      <ul className="row" aria-label={t('lists.byVerdict')}>{(['valid', 'risky', 'invalid', 'unknown'] as const).map(v => <li key={v}><VerdictBadge verdict={v} /> <span data-testid={`count-${v}`}>{formatNumber(batch.results.by_verdict[v])}</span></li>)}</ul>
      <p className="muted">{t('lists.tokens', { reserved: formatNumber(batch.tokens.reserved), captured: formatNumber(batch.tokens.captured), released: formatNumber(batch.tokens.released) })}{batch.duplicates > 0 ? ` · ${t('lists.duplicates', { n: formatNumber(batch.duplicates) })}` : ''}</p>
      <Button onPress={() => { void download(`/api/batches/${batch.uuid}/results`, 'text/csv', `${(batch.name ?? batch.uuid).replace(/\.[a-z]+$/i, '')}-results.csv`) }}>{t('lists.download')}</Button>
      <ApiCall method="GET" path={`/api/batches/${batch.uuid}/results`} />
    </section>
  )
}

/** Lists: upload a file, pick the address column, see the unique count and the cost against the balance, start, watch, download. */
export default function Lists ({ uuid }: { uuid?: string }): ReactNode {
  const { t, formatNumber } = useI18n()
  const [, go] = useLocation()
  const config = useLoad(async () => await api.GET('/api/config'), [])
  const subscription = useLoad(async () => await api.GET('/api/subscription'), [])
  const wallet = useLoad(async () => await api.GET('/api/wallet'), [uuid])
  const batches = useLoad(async () => await api.GET('/api/batches', { params: { query: { limit: 20 } } }), [uuid])
  const [parsed, setParsed] = useState<Parsed | null>(null)
  const [column, setColumn] = useState('0')
  const [failure, setFailure] = useState<Failure | null>(null)
  const [sending, setSending] = useState<number | null>(null)
  const plan = config.data?.plans.find(p => p.code === subscription.data?.limits_plan)
  const costPer = (plan?.allowed_checks ?? []).reduce((s, c) => s + (config.data?.check_costs[c] ?? 0), 0)
  const addresses = useMemo(() => parsed ? parsed.rows.map(r => (r[Number(column)] ?? '').trim()).filter(a => a !== '') : [], [parsed, column])
  // The service's de-duplication key, near enough: the domain is case-insensitive (RFC 5321 §2.4), the local part is not.
  const keys = useMemo(() => new Set(addresses.filter(a => ADDRESS.test(a)).map(a => a.replace(/@([^@]*)$/, (_, d: string) => `@${d.toLowerCase()}`))), [addresses])
  const unique = keys.size
  const notAddresses = useMemo(() => addresses.filter(a => !ADDRESS.test(a)).length, [addresses])
  const cost = unique * costPer
  const balance = wallet.data?.balance ?? 0
  const start = async (): Promise<void> => {
    if (!parsed || !plan) return
    setFailure(null)
    const size = plan.limits.max_chunk_size
    let batchUuid: string | null = null
    for (let at = 0; ; at += size) {
      setSending(at)
      const emails = addresses.slice(at, at + size)
      const final = at + size >= addresses.length
      const r: { data?: Batch, error?: unknown, response: Response } = batchUuid === null
        ? await api.POST('/api/batches', { body: { emails, final, name: parsed.name } })
        : await api.POST('/api/batches/{uuid}/emails', { params: { path: { uuid: batchUuid } }, body: { emails, final } })
      if (!r.data) { setFailure(failureOf(r.error, r.response)); setSending(null); return }
      batchUuid = r.data.uuid
      if (final) break
    }
    setSending(null)
    setParsed(null)
    go(`/lists/${batchUuid}`)
  }
  return (
    <>
      <PageTitle>{t('nav.lists')}</PageTitle>
      {uuid ? <BatchView uuid={uuid} /> : (
        <section className="card" aria-labelledby="upload-h">
          <h2 id="upload-h">{t('lists.upload')}</h2>
          <div className="field">
            <label htmlFor="list-file">{t('lists.file')}</label>
            <input id="list-file" type="file" accept=".csv,.tsv,.txt,text/csv,text/plain" aria-describedby="list-file-hint" onChange={e => { const f = e.target.files?.[0]; if (f) void parseFile(f).then(p => { setParsed(p); setColumn(String(p.column)) }) }} />
            <span id="list-file-hint" className="hint">{t('lists.fileHint')}</span>
          </div>
          {parsed && (
            <>
              <Choice label={t('lists.column')} value={column} onChange={setColumn} options={parsed.header.map((h, i) => [String(i), h])} />
              <p data-testid="estimate">{t('lists.estimate', { rows: formatNumber(parsed.rows.length), unique: formatNumber(unique), cost: formatNumber(cost), balance: formatNumber(balance) })}</p>
              {notAddresses > 0 && <p className="muted">{t('lists.invalid', { n: formatNumber(notAddresses) })}</p>}
              {cost > balance && <p className="alert warn">{t('lists.short', { n: formatNumber(cost - balance) })} <Link href="/billing">{t('overview.buy')}</Link></p>}
              <ProblemAlert problem={failure?.problem ?? null} retryAfter={failure?.retryAfter} />
              <Button isDisabled={sending !== null || unique === 0} onPress={() => { void start() }}>{sending !== null ? t('lists.sending', { n: formatNumber(sending) }) : t('lists.start')}</Button>
              <ApiCall method="POST" path="/api/batches" body={{ emails: addresses.slice(0, 2), final: true, name: parsed.name }} />
            </>
          )}
        </section>
      )}
      <section className="card" aria-labelledby="lists-h">
        <h2 id="lists-h">{t('lists.past')}</h2>
        {(batches.data?.items ?? []).length === 0 ? <p className="muted">{t('lists.none')}</p> : (
          <div className="table-wrap" {...scrollable(t('lists.past'))}>
            <table>
              <thead><tr><th scope="col">{t('lists.name')}</th><th scope="col">{t('lists.status')}</th><th scope="col">{t('lists.progress')}</th></tr></thead>
              <tbody>{batches.data!.items.map(b => <tr key={b.uuid}><td><Link href={`/lists/${b.uuid}`}>{b.name ?? b.uuid.slice(0, 8)}</Link></td><td>{t(`batch.${b.status}` as 'batch.completed')}</td><td>{formatNumber(b.progress.processed)} / {formatNumber(b.progress.total)}</td></tr>)}</tbody>
            </table>
          </div>
        )}
        {uuid && <Link href="/lists">{t('lists.new')}</Link>}
      </section>
    </>
  )
}
