import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react'
import { Button, ProgressBar, Label } from 'react-aria-components'
import { Link, useLocation } from 'wouter'
import Papa from 'papaparse'
import { api, download, upload, type Schemas } from '../api.ts'
import { useI18n } from '../i18n.tsx'
import { ApiCall, PageTitle, ProblemAlert, VerdictBadge, failureOf, type Failure, scrollable } from '../ui.tsx'
import { Choice } from '../components/choice.tsx'
import { useGet } from '../queries.ts'
import { EnvironmentBadge, HeldNotice, useMode } from '../mode.tsx'

type Batch = Schemas['Batch']
type Estimate = Schemas['BatchEstimate']
const ADDRESS = /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/

/** A file read in the browser: its rows (a header row when the first row names columns), its columns, the column that holds addresses, and the file itself (kept beside the batch). */
interface Parsed {
  file: File
  name: string
  header: string[] | null
  names: string[]
  rows: string[][]
  column: number
}

/** Reads a CSV, TSV or text file (papaparse: delimiter, quoting and BOM detected) and finds the column whose values look most like addresses. */
async function parseFile(file: File): Promise<Parsed> {
  const text = (await file.text()).replace(/^\uFEFF/, '')
  const result = Papa.parse<string[]>(text, { skipEmptyLines: 'greedy', delimitersToGuess: [',', ';', '\t', '|'] })
  const all = result.data.filter(r => r.some(c => c.trim() !== ''))
  const width = Math.max(1, ...all.map(r => r.length))
  const firstLooksLikeData = (all[0] ?? []).some(c => ADDRESS.test(c.trim()))
  const header = firstLooksLikeData ? null : Array.from({ length: width }, (_, i) => (all[0]?.[i] ?? '').trim())
  const names = Array.from({ length: width }, (_, i) => header?.[i] || `column ${i + 1}`)
  const rows = firstLooksLikeData ? all : all.slice(1)
  const score = Array.from({ length: width }, (_, i) => rows.slice(0, 1000).filter(r => ADDRESS.test((r[i] ?? '').trim())).length)
  return { file, name: file.name, header, names, rows, column: Math.max(0, score.indexOf(Math.max(...score))) }
}

/**
 * The de-duplication key of an address, as `svc verify-file` makes it: lower-cased, the
 * domain in ASCII (the URL parser's IDNA); a later row with the same key is a duplicate.
 */
function addressKey(text: string): string {
  const t = text.trim().normalize('NFC').toLowerCase()
  const at = t.lastIndexOf('@')
  if (at <= 0) return `~${t}`
  let domain = t.slice(at + 1)
  try {
    domain = new URL(`http://${domain}`).hostname
  } catch {
    /* not a host name: kept as typed */
  }
  return `${t.slice(0, at)}@${domain}`
}

/** The media type a kept file is sent as (the service reads its content; this names it). */
const mediaOf = (name: string): string => (/\.tsv$/i.test(name) ? 'text/tab-separated-values' : /\.txt$/i.test(name) ? 'text/plain' : 'text/csv')

/** A batch as it runs: progress, results by verdict, tokens, and the files to download. */
/** One list as it runs; `onUpdate` is told each time what it shows changes (the page's table follows it). */
function BatchView({ uuid, onUpdate }: { uuid: string; onUpdate?: () => void }): ReactNode {
  const { t, formatNumber, formatDate } = useI18n()
  const [batch, setBatch] = useState<Batch | null>(null)
  const [failure, setFailure] = useState<Failure | null>(null)
  // The latest callback, for the poll started once per list.
  const updated = useRef(onUpdate)
  updated.current = onUpdate
  useEffect(() => {
    let live = true
    let last = ''
    const poll = async (): Promise<void> => {
      while (live) {
        // Answered as soon as the batch completes, or after a second: the bar moves, nothing polls faster.
        const r = await api.GET('/api/batches/{uuid}', { params: { path: { uuid }, query: { wait: 1 } } })
        if (!live) return
        if (!r.data) {
          setFailure(failureOf(r.error, r.response))
          return
        }
        const shown = `${r.data.status} ${r.data.progress.processed} ${r.data.held?.since ?? ''}`
        if (shown !== last) {
          last = shown
          setBatch(r.data)
          updated.current?.()
        }
        if (r.data.status === 'completed') return
      }
    }
    void poll()
    return () => {
      live = false
    }
  }, [uuid])
  if (failure) return <ProblemAlert problem={failure.problem} />
  if (!batch) return <p role="status">{t('app.loading')}</p>
  const done = batch.progress.total === 0 ? 100 : Math.round((100 * batch.progress.processed) / batch.progress.total)
  const base = (batch.name ?? batch.uuid).replace(/\.[a-z]+$/i, '')
  const save = async (path: string, accept: string, name: string): Promise<void> => {
    try {
      await download(path, accept, name)
    } catch (err) {
      setFailure({ problem: err as Schemas['Problem'], retryAfter: null })
    }
  }
  return (
    <section className="card" aria-labelledby="batch-h" data-testid="batch">
      <h2 id="batch-h">
        {batch.name ?? batch.uuid} <EnvironmentBadge environment={batch.environment} />
      </h2>
      <ProgressBar value={done} aria-label={t('lists.progress')}>
        {({ percentage }) => (
          <>
            <Label>
              {t('lists.progress')}: {formatNumber(batch.progress.processed)} / {formatNumber(batch.progress.total)} ({Math.round(percentage ?? 0)} %)
            </Label>
            <div className="bar">
              <div className="fill" style={{ width: `${percentage ?? 0}%` }} />
            </div>
          </>
        )}
      </ProgressBar>
      <p role="status" aria-live="polite" data-testid="batch-status" className={batch.held ? 'alert warn' : undefined}>
        {batch.held
          ? t('batch.held', { until: formatDate(Date.parse(batch.held.until), { dateStyle: 'medium', timeStyle: 'short' }) })
          : t(`batch.${batch.status}` as 'batch.completed')}
      </p>
      <ul className="row" aria-label={t('lists.byVerdict')}>
        {(['valid', 'risky', 'invalid', 'unknown'] as const).map(v => (
          <li key={v}>
            <VerdictBadge verdict={v} /> <span data-testid={`count-${v}`}>{formatNumber(batch.results.by_verdict[v])}</span>
          </li>
        ))}
      </ul>
      <p className="muted">
        {t('lists.tokens', {
          reserved: formatNumber(batch.tokens.reserved),
          captured: formatNumber(batch.tokens.captured),
          released: formatNumber(batch.tokens.released)
        })}
        {batch.duplicates > 0 ? ` · ${t('lists.duplicates', { n: formatNumber(batch.duplicates) })}` : ''}
      </p>
      <div className="row">
        {batch.source && (
          <Button
            onPress={() => {
              void save(`/api/batches/${batch.uuid}/source`, '*/*', `${base}-verified.${batch.source!.format === 'xlsx' ? 'xlsx' : 'csv'}`)
            }}
          >
            {t('lists.downloadFile')}
          </Button>
        )}
        <Button
          className={`react-aria-Button${batch.source ? ' secondary' : ''}`}
          onPress={() => {
            void save(`/api/batches/${batch.uuid}/results`, 'text/csv', `${base}-results.csv`)
          }}
        >
          {t('lists.download')}
        </Button>
      </div>
      {batch.source && (
        <p className="muted" data-testid="kept">
          {t('lists.kept', { date: formatDate(Date.parse(batch.source.expires_at), { dateStyle: 'long' }) })}
        </p>
      )}
      <ApiCall method="GET" path={`/api/batches/${batch.uuid}/${batch.source ? 'source' : 'results'}`} />
    </section>
  )
}

/** Lists: upload a file, pick the address column, see the unique count and the cost against the balance, start, watch, download the file with its results. */
export default function Lists({ uuid }: { uuid?: string }): ReactNode {
  const { t, formatNumber, formatDate } = useI18n()
  const [, go] = useLocation()
  const { environment } = useMode()
  const batches = useGet('/api/batches', { params: { query: { limit: 20, environment } } }, [uuid])
  const [parsed, setParsed] = useState<Parsed | null>(null)
  const [column, setColumn] = useState('0')
  const [failure, setFailure] = useState<Failure | null>(null)
  const [sending, setSending] = useState<number | null>(null)
  const [estimate, setEstimate] = useState<Estimate | null>(null)
  // The unique addresses in order of first appearance (what is sent), and which of them look valid (what is charged).
  const unique = useMemo(() => {
    if (!parsed) return []
    const seen = new Set<string>()
    const out: Array<{ email: string; valid: boolean }> = []
    for (const r of parsed.rows) {
      const email = (r[Number(column)] ?? '').trim()
      if (email === '') continue
      const key = addressKey(email)
      if (seen.has(key)) continue
      seen.add(key)
      out.push({ email, valid: ADDRESS.test(email) })
    }
    return out
  }, [parsed, column])
  const valid = useMemo(() => unique.filter(a => a.valid).length, [unique])
  useEffect(() => {
    setEstimate(null)
    if (!parsed) return
    let live = true
    void api.POST('/api/batches/estimate', { body: { addresses: valid, environment } }).then(r => {
      if (live) {
        if (r.data) setEstimate(r.data)
        else setFailure(failureOf(r.error, r.response))
      }
    })
    return () => {
      live = false
    }
  }, [parsed, valid, environment])
  const short = estimate !== null && estimate.cost > estimate.balance
  const start = async (partial: boolean): Promise<void> => {
    if (!parsed || !estimate) return
    setFailure(null)
    // A partial run sends the addresses up to the last valid one the balance covers (the invalid ones cost nothing).
    let list = unique
    if (partial) {
      let covered = 0
      const end = unique.findIndex(a => a.valid && ++covered > estimate.covered)
      list = end < 0 ? unique : unique.slice(0, end)
    }
    const size = estimate.max_chunk_size
    let batchUuid: string | null = null
    for (let at = 0; ; at += size) {
      setSending(at)
      const emails = list.slice(at, at + size).map(a => a.email)
      const final = at + size >= list.length
      const r: { data?: Batch; error?: unknown; response: Response } =
        batchUuid === null
          ? await api.POST('/api/batches', { body: { emails, final, name: parsed.name, environment } })
          : await api.POST('/api/batches/{uuid}/emails', { params: { path: { uuid: batchUuid } }, body: { emails, final } })
      if (!r.data) {
        setFailure(failureOf(r.error, r.response))
        setSending(null)
        return
      }
      batchUuid = r.data.uuid
      if (final) break
    }
    // The customer's file, kept beside the batch: downloaded later (from any browser) with its columns and the results.
    const columnName = parsed.header?.[Number(column)] || String(Number(column) + 1)
    const kept = await upload(
      `/api/batches/${batchUuid}/source?name=${encodeURIComponent(parsed.name)}&column=${encodeURIComponent(columnName)}`,
      parsed.file,
      mediaOf(parsed.name)
    )
    if (kept !== null) {
      setFailure(kept)
      setSending(null)
      return
    }
    setSending(null)
    setParsed(null)
    go(`/lists/${batchUuid}`)
  }
  return (
    <>
      <PageTitle>{t('nav.lists')}</PageTitle>
      <HeldNotice />
      {uuid ? (
        <BatchView uuid={uuid} onUpdate={batches.reload} />
      ) : (
        <section className="card" aria-labelledby="upload-h">
          <h2 id="upload-h">{t('lists.upload')}</h2>
          <div className="field">
            <label htmlFor="list-file">{t('lists.file')}</label>
            <input
              id="list-file"
              type="file"
              accept=".csv,.tsv,.txt,text/csv,text/plain,text/tab-separated-values"
              aria-describedby="list-file-hint"
              onChange={e => {
                const f = e.target.files?.[0]
                if (f)
                  void parseFile(f).then(p => {
                    setParsed(p)
                    setColumn(String(p.column))
                  })
              }}
            />
            <span id="list-file-hint" className="hint">
              {t('lists.fileHint')}
            </span>
          </div>
          {parsed && (
            <>
              <Choice label={t('lists.column')} value={column} onChange={setColumn} options={parsed.names.map((h, i) => [String(i), h])} />
              <p data-testid="estimate">
                {estimate
                  ? t('lists.estimate', {
                      rows: formatNumber(parsed.rows.length),
                      unique: formatNumber(unique.length),
                      cost: formatNumber(estimate.cost),
                      balance: formatNumber(estimate.balance)
                    })
                  : '…'}
              </p>
              {unique.length > valid && <p className="muted">{t('lists.invalid', { n: formatNumber(unique.length - valid) })}</p>}
              {short && (
                <p className="alert warn">
                  {t('lists.short', { n: formatNumber(estimate.cost - estimate.balance) })} <Link href="/billing">{t('overview.buy')}</Link>
                </p>
              )}
              <ProblemAlert problem={failure?.problem ?? null} retryAfter={failure?.retryAfter} />
              <div className="row">
                <Button
                  isDisabled={sending !== null || unique.length === 0 || estimate === null || short}
                  onPress={() => {
                    void start(false)
                  }}
                >
                  {sending !== null ? t('lists.sending', { n: formatNumber(sending) }) : t('lists.start')}
                </Button>
                {short && estimate.covered > 0 && (
                  <Button
                    className="react-aria-Button secondary"
                    isDisabled={sending !== null}
                    onPress={() => {
                      void start(true)
                    }}
                  >
                    {t('lists.partial', { n: formatNumber(estimate.covered) })}
                  </Button>
                )}
              </div>
              <ApiCall method="POST" path="/api/batches/estimate" body={{ addresses: valid, ...(environment === 'test' && { environment }) }} />
              <ApiCall
                method="POST"
                path="/api/batches"
                body={{ emails: unique.slice(0, 2).map(a => a.email), final: true, name: parsed.name, ...(environment === 'test' && { environment }) }}
              />
            </>
          )}
        </section>
      )}
      <section className="card" aria-labelledby="lists-h">
        <h2 id="lists-h">{t('lists.past')}</h2>
        {(batches.data?.items ?? []).length === 0 ? (
          <p className="muted">{t('lists.none')}</p>
        ) : (
          <div className="table-wrap" {...scrollable(t('lists.past'))}>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t('lists.name')}</th>
                  <th scope="col">{t('lists.created')}</th>
                  <th scope="col">{t('lists.status')}</th>
                  <th scope="col">{t('lists.progress')}</th>
                </tr>
              </thead>
              <tbody>
                {batches.data!.items.map(b => (
                  <tr key={b.uuid}>
                    <td>
                      <Link href={`/lists/${b.uuid}`}>{b.name ?? b.uuid.slice(0, 8)}</Link>
                      <EnvironmentBadge environment={b.environment} />
                    </td>
                    <td>{formatDate(Date.parse(b.created_at))}</td>
                    <td>{t(b.held ? 'job.status.held' : (`batch.${b.status}` as 'batch.completed'))}</td>
                    <td>
                      {formatNumber(b.progress.processed)} / {formatNumber(b.progress.total)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {uuid && <Link href="/lists">{t('lists.new')}</Link>}
      </section>
    </>
  )
}
