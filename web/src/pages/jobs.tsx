import { useState, type ReactNode } from 'react'
import { Button, Checkbox, CheckboxGroup, Label } from 'react-aria-components'
import { Link } from 'wouter'
import { useI18n } from '../i18n.tsx'
import { ApiCall, Field, PageTitle, ProblemAlert, VerdictBadge, scrollable, sortHeader } from '../ui.tsx'
import { ResultCard } from '../components/result-card.tsx'
import { useGet } from '../queries.ts'
import { EnvironmentBadge, useMode } from '../mode.tsx'

const SORTS = ['created_at', 'score', 'status', 'verdict', 'uuid'] as const
type Sort = (typeof SORTS)[number]
const PAGE = 20

function JobDetail({ uuid }: { uuid: string }): ReactNode {
  const { t } = useI18n()
  const job = useGet('/api/jobs/{uuid}', { params: { path: { uuid } } })
  return (
    <>
      <p>
        <Link href="/jobs">← {t('nav.jobs')}</Link>
      </p>
      <ProblemAlert problem={job.failure?.problem ?? null} />
      {job.data && <ResultCard job={job.data} />}
      <ApiCall method="GET" path={`/api/jobs/${uuid}`} />
    </>
  )
}

/** Jobs of the current mode's environment (live, or the sandbox's in test mode): the interface's filters (status, verdict, creation window, uuid prefix), sorts and pages; a job's detail. */
export default function Jobs({ uuid }: { uuid?: string }): ReactNode {
  const { t, formatDate, formatNumber, plural } = useI18n()
  const { environment } = useMode()
  const [status, setStatus] = useState<string[]>([])
  const [verdict, setVerdict] = useState<string[]>([])
  const [search, setSearch] = useState('')
  const [from, setFrom] = useState('')
  const [to, setTo] = useState('')
  const [sort, setSort] = useState<Sort>('created_at')
  const [order, setOrder] = useState<'asc' | 'desc'>('desc')
  const [offset, setOffset] = useState(0)
  const query = {
    environment,
    limit: PAGE,
    offset,
    sort,
    order,
    ...(status.length > 0 && { status: status.join(',') }),
    ...(verdict.length > 0 && { verdict: verdict.join(',') }),
    ...(search.trim() !== '' && { search: search.trim() }),
    ...(from !== '' && { from: new Date(from).toISOString() }),
    ...(to !== '' && { to: new Date(to).toISOString() })
  }
  const jobs = useGet('/api/jobs', { params: { query } })
  if (uuid)
    return (
      <>
        <PageTitle>{t('jobs.detail')}</PageTitle>
        <JobDetail uuid={uuid} />
      </>
    )
  const sortBy = (s: Sort): void => {
    if (s === sort) setOrder(o => (o === 'asc' ? 'desc' : 'asc'))
    else {
      setSort(s)
      setOrder('desc')
    }
    setOffset(0)
  }
  const head = sortHeader(sort, order, sortBy)
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString()
  return (
    <>
      <PageTitle>{t('nav.jobs')}</PageTitle>
      <section className="card" aria-labelledby="filters-h">
        <h2 id="filters-h">{t('jobs.filters')}</h2>
        <div className="row">
          <CheckboxGroup
            value={status}
            onChange={v => {
              setStatus(v)
              setOffset(0)
            }}
          >
            <Label>{t('jobs.status')}</Label>
            {(['queued', 'deferred', 'completed', 'failed'] as const).map(s => (
              <Checkbox key={s} value={s}>
                <span className="box" aria-hidden="true" />
                {t(`job.status.${s}`)}
              </Checkbox>
            ))}
          </CheckboxGroup>
          <CheckboxGroup
            value={verdict}
            onChange={v => {
              setVerdict(v)
              setOffset(0)
            }}
          >
            <Label>{t('jobs.verdict')}</Label>
            {(['valid', 'risky', 'invalid', 'unknown'] as const).map(v => (
              <Checkbox key={v} value={v}>
                <span className="box" aria-hidden="true" />
                {t(`verdict.${v}`)}
              </Checkbox>
            ))}
          </CheckboxGroup>
          <Field
            label={t('jobs.search')}
            description={t('jobs.searchHint')}
            value={search}
            onChange={v => {
              setSearch(v)
              setOffset(0)
            }}
          />
          <Field
            label={t('jobs.from')}
            type="datetime-local"
            value={from}
            onChange={v => {
              setFrom(v)
              setOffset(0)
            }}
          />
          <Field
            label={t('jobs.to')}
            type="datetime-local"
            value={to}
            onChange={v => {
              setTo(v)
              setOffset(0)
            }}
          />
        </div>
        <ApiCall method="GET" path={`/api/jobs?${qs}`} />
      </section>
      <ProblemAlert problem={jobs.failure?.problem ?? null} />
      <section className="card" aria-labelledby="list-h">
        <h2 id="list-h">{t(`jobs.found.${plural(jobs.data?.total ?? 0)}`, { n: formatNumber(jobs.data?.total ?? 0) })}</h2>
        <div className="table-wrap" {...scrollable(t('nav.jobs'))}>
          <table>
            <thead>
              <tr>
                {head('created_at', t('jobs.created'), 'wide-only')}
                <th scope="col">{t('field.email')}</th>
                {head('status', t('jobs.status'))}
                {head('verdict', t('jobs.verdict'))}
                {head('score', t('result.score'))}
                {head('uuid', 'uuid', 'wide-only')}
              </tr>
            </thead>
            <tbody>
              {(jobs.data?.items ?? []).map(j => (
                <tr key={j.uuid}>
                  <td className="wide-only">{formatDate(Date.parse(j.created_at), { dateStyle: 'short', timeStyle: 'short' })}</td>
                  <td className="address">
                    <Link href={`/jobs/${j.uuid}`}>{j.email}</Link>
                    <EnvironmentBadge environment={j.environment} />
                  </td>
                  <td>{t(j.deferral?.reason === 'egress_blocked' ? 'job.status.held' : `job.status.${j.status}`)}</td>
                  <td>
                    <VerdictBadge verdict={j.verdict} />
                  </td>
                  <td>{j.score ?? '—'}</td>
                  <td className="mono wide-only">{j.uuid.slice(0, 13)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <nav className="row" aria-label={t('jobs.pages')}>
          <Button
            className="react-aria-Button secondary"
            isDisabled={offset === 0}
            onPress={() => {
              setOffset(Math.max(0, offset - PAGE))
            }}
          >
            {t('jobs.previous')}
          </Button>
          <span>
            {formatNumber(Math.min(offset + 1, jobs.data?.total ?? 0))}–{formatNumber(Math.min(offset + PAGE, jobs.data?.total ?? 0))} /{' '}
            {formatNumber(jobs.data?.total ?? 0)}
          </span>
          <Button
            className="react-aria-Button secondary"
            isDisabled={offset + PAGE >= (jobs.data?.total ?? 0)}
            onPress={() => {
              setOffset(offset + PAGE)
            }}
          >
            {t('jobs.next')}
          </Button>
        </nav>
      </section>
    </>
  )
}
