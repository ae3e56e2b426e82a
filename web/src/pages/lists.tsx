import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react'
import { Button, DropZone, ProgressBar, Label, Text } from 'react-aria-components'
import { Link, useLocation } from 'wouter'
import { api, download, upload, type Schemas } from '../api.ts'
import { useI18n } from '../i18n.tsx'
import { ApiCall, PageTitle, ProblemAlert, VerdictBadge, failureOf, type Failure, scrollable } from '../ui.tsx'
import { Choice } from '../components/choice.tsx'
import { useGet } from '../queries.ts'
import { EnvironmentBadge, HeldNotice, useMode } from '../mode.tsx'

type Batch = Schemas['Batch']
type Estimate = Schemas['BatchEstimate']
type Preview = Schemas['ListPreview']
const ADDRESS = /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/

/** Downloads by segment: a clean list (valid), the risky ones, the ones to remove (invalid), and those to try again (unknown). */
const SEGMENTS = [
  ['valid', ['valid']],
  ['risky', ['risky']],
  ['invalid', ['invalid']],
  ['unknown', ['unknown']]
] as const satisfies ReadonlyArray<readonly [string, ReadonlyArray<'valid' | 'risky' | 'invalid' | 'unknown'>]>

/** The media type a list file is sent as (the service reads its content; this names it). */
const mediaOf = (name: string): string =>
  /\.xlsx$/i.test(name)
    ? 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
    : /\.tsv$/i.test(name)
      ? 'text/tab-separated-values'
      : /\.txt$/i.test(name)
        ? 'text/plain'
        : 'text/csv'

/** What the file picker and the drop zone take: the formats `svc verify-file` takes. */
const ACCEPT = '.csv,.tsv,.txt,.xlsx,text/csv,text/plain,text/tab-separated-values,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'

/**
 * A list file as the service reads it (`POST /api/lists/preview`): its columns, the address
 * column, its first rows and its addresses once each. Any format `svc verify-file` takes,
 * XLSX included, without a spreadsheet library in the page. `column`: a number from 1, or
 * null to let the service find it.
 */
async function previewOf(file: File, column: number | null): Promise<{ data?: Preview; failure?: Failure }> {
  const r = await api.POST('/api/lists/preview', {
    params: { query: { name: file.name, ...(column !== null && { column: String(column + 1) }) } },
    body: file as never,
    bodySerializer: (b: unknown) => b as Blob,
    headers: { 'content-type': mediaOf(file.name) }
  })
  return r.data ? { data: r.data } : { failure: failureOf(r.error, r.response) }
}

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
  const extension = batch.source?.format === 'xlsx' ? 'xlsx' : 'csv'
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
      <ul className="row counts" aria-label={t('lists.byVerdict')}>
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
              void save(`/api/batches/${batch.uuid}/source`, '*/*', `${base}-verified.${extension}`)
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
      {/* By segment (as `svc verify-file --split` makes them): the customer's own file when it is kept, else the results. */}
      <fieldset className="row segments">
        <legend className="muted">{t('lists.segments')}</legend>
        {SEGMENTS.map(([key, verdicts]) => (
          <Button
            key={key}
            className="react-aria-Button secondary"
            isDisabled={verdicts.every(v => batch.results.by_verdict[v] === 0)}
            onPress={() => {
              const q = `verdict=${verdicts.join(',')}`
              void (batch.source
                ? save(`/api/batches/${batch.uuid}/source?${q}`, '*/*', `${base}-${key}.${extension}`)
                : save(`/api/batches/${batch.uuid}/results?${q}`, 'text/csv', `${base}-${key}.csv`))
            }}
          >
            {t(`lists.segment.${key}`)} ({formatNumber(verdicts.reduce((n, v) => n + batch.results.by_verdict[v], 0))})
          </Button>
        ))}
      </fieldset>
      {batch.source && (
        <p className="muted" data-testid="kept">
          {t('lists.kept', { date: formatDate(Date.parse(batch.source.expires_at), { dateStyle: 'long' }) })}
        </p>
      )}
      <ApiCall method="GET" path={`/api/batches/${batch.uuid}/${batch.source ? 'source' : 'results'}`} />
    </section>
  )
}

/** A column's name: its header's, else "column 3" in the viewer's language. */
const columnName = (t: ReturnType<typeof useI18n>['t'], preview: Preview, i: number): string => preview.header?.[i] || t('lists.columnN', { n: i + 1 })

/** The first rows of the file as the service read them, the address column marked: what a person checks before paying. */
function RowPreview({ preview }: { preview: Preview }): ReactNode {
  const { t } = useI18n()
  return (
    <div className="table-wrap preview" {...scrollable(t('lists.preview'))} data-testid="row-preview">
      <table>
        <caption className="muted">{t('lists.preview')}</caption>
        <thead>
          <tr>
            {preview.columns.map((name, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a column's place is its identity (two may share a name)
              <th scope="col" key={`${i}-${name}`} className={i === preview.column ? 'picked' : undefined}>
                {columnName(t, preview, i)}
                {i === preview.column && <span className="badge pick">{t('lists.addressColumn')}</span>}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {preview.sample.map((row, k) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: rows of a file have no identity but their place
            <tr key={k}>
              {preview.columns.map((_, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: cells have no identity but their place
                <td key={i} className={i === preview.column ? 'picked mono' : undefined}>
                  {row[i] ?? ''}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** Lists: upload a file, pick the address column, see the unique count and the cost against the balance, start, watch, download the file with its results. */
export default function Lists({ uuid }: { uuid?: string }): ReactNode {
  const { t, formatNumber, formatDate } = useI18n()
  const [, go] = useLocation()
  const { environment } = useMode()
  const batches = useGet('/api/batches', { params: { query: { limit: 20, environment } } }, [uuid])
  const [file, setFile] = useState<File | null>(null)
  const [parsed, setParsed] = useState<Preview | null>(null)
  const [reading, setReading] = useState(false)
  const [failure, setFailure] = useState<Failure | null>(null)
  const [sending, setSending] = useState<number | null>(null)
  const [estimate, setEstimate] = useState<Estimate | null>(null)
  const column = parsed ? String(parsed.column) : '0'
  /** Reads `f` through the service (its address column found, or the one chosen: from 0). */
  const read = async (f: File, chosen: number | null): Promise<void> => {
    setFile(f)
    setReading(true)
    setFailure(null)
    const r = await previewOf(f, chosen)
    setReading(false)
    if (r.data) setParsed(r.data)
    else {
      setParsed(null)
      setFailure(r.failure ?? null)
    }
  }
  // The unique addresses in order of first appearance (what is sent), and which of them look valid (what is charged).
  const unique = useMemo(() => (parsed?.addresses ?? []).map(email => ({ email, valid: ADDRESS.test(email) })), [parsed])
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
    if (!parsed || !estimate || !file) return
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
    const kept = await upload(
      `/api/batches/${batchUuid}/source?name=${encodeURIComponent(parsed.name)}&column=${encodeURIComponent(String(parsed.column + 1))}`,
      file,
      mediaOf(parsed.name)
    )
    if (kept !== null) {
      setFailure(kept)
      setSending(null)
      return
    }
    setSending(null)
    setParsed(null)
    setFile(null)
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
          <DropZone
            className="react-aria-DropZone dropzone"
            // Any file is taken: the service says what it is not (a 415 in words), as the picker's own choice would.
            getDropOperation={() => 'copy'}
            onDrop={e => {
              const item = e.items.find(i => i.kind === 'file')
              if (item?.kind === 'file') void item.getFile().then(async f => await read(f, null))
            }}
          >
            <Text slot="label">{t('lists.drop')}</Text>
            <div className="field">
              <label htmlFor="list-file">{t('lists.file')}</label>
              <input
                id="list-file"
                type="file"
                accept={ACCEPT}
                aria-describedby="list-file-hint"
                onChange={e => {
                  const f = e.target.files?.[0]
                  if (f) void read(f, null)
                }}
              />
              <span id="list-file-hint" className="hint">
                {t('lists.fileHint')}
              </span>
            </div>
          </DropZone>
          {reading && <p role="status">{t('lists.reading')}</p>}
          {!parsed && <ProblemAlert problem={failure?.problem ?? null} retryAfter={failure?.retryAfter} />}
          {parsed && (
            <>
              <Choice
                label={t('lists.column')}
                value={column}
                onChange={v => {
                  if (file) void read(file, Number(v))
                }}
                options={parsed.columns.map((_, i) => [String(i), columnName(t, parsed, i)])}
              />
              <RowPreview preview={parsed} />
              <p data-testid="estimate">
                {estimate
                  ? t('lists.estimate', {
                      rows: formatNumber(parsed.rows),
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
