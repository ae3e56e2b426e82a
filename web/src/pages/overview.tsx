import { useEffect, useMemo, useState, type ReactNode } from 'react'
import { Link } from 'wouter'
import { api } from '../api.ts'
import { TimeChart } from '../chart.tsx'
import { useI18n } from '../i18n.tsx'
import { ApiCall, PageTitle, ProblemAlert, VerdictBadge, fullCheckCost } from '../ui.tsx'
import { Choice } from '../components/choice.tsx'
import { useGet } from '../queries.ts'
import { EnvironmentBadge, HeldNotice, useMode } from '../mode.tsx'

const VERDICT_COLOURS: Record<string, string> = { valid: '#1a7f37', invalid: '#cf222e', risky: '#9a6700', unknown: '#0969da' }
const WINDOWS = [
  ['hour', 1],
  ['hour', 7],
  ['day', 28],
  ['week', 84],
  ['month', 364]
] as const

/** A reason `/readyz` gives (its `detail`, operators' infrastructure, is null without the metrics token: never shown here). */
type NotReady = { component: string; problem: string }

/**
 * The service's own health, for whoever runs it (`GET /readyz`): nothing while it is ready;
 * while it is not, what is wrong in words (egress to port 25 failing holds live checks),
 * never where (proxies, resolvers and hosts are the operator's to see).
 */
function ServiceStatus(): ReactNode {
  const { t } = useI18n()
  const [reasons, setReasons] = useState<NotReady[]>([])
  useEffect(() => {
    let live = true
    void api.GET('/readyz').then(r => {
      if (live && r.response.status === 503 && r.error && 'reasons' in r.error) setReasons(r.error.reasons)
    })
    return () => {
      live = false
    }
  }, [])
  // Egress failing (live checks held) is said by HeldNotice, in what it means for the customer.
  const others = reasons.filter(r => r.component !== 'egress')
  if (others.length === 0) return null
  return (
    <div className="alert warn" role="status" data-testid="service-status">
      <strong>{t('health.degraded')}</strong>
      <ul>
        {others.map(r => (
          <li key={`${r.component}-${r.problem}`}>{t(`health.${r.problem}` as 'health.starting')}</li>
        ))}
      </ul>
    </div>
  )
}

/** What an account with nothing verified yet sees where its usage will be: the steps, each a link to where it is done. */
function GetStarted(): ReactNode {
  const { t } = useI18n()
  const { environment } = useMode()
  return (
    <div className="getting-started" data-testid="get-started">
      <h3>{t('start.title')}</h3>
      <ol>
        <li>{environment === 'test' ? t('start.testOn') : t('start.test')}</li>
        <li>
          <Link href="/verify">{t('start.verify')}</Link> — {t('start.verifyHint')}
        </li>
        <li>
          <Link href="/lists">{t('start.list')}</Link> — {t('start.listHint')}
        </li>
        <li>
          <Link href="/keys">{t('start.key')}</Link> — {t('start.keyHint')}
        </li>
      </ol>
    </div>
  )
}

/** The overview: balance, plan, usage over time by verdict in the viewer's time zone, recent jobs and batches, unread notifications. */
export default function Overview(): ReactNode {
  const { t, formatNumber, formatDate, timeZone, planName } = useI18n()
  const [win, setWin] = useState('2')
  const [granularity, days] = WINDOWS[Number(win)]
  const wallet = useGet('/api/wallet')
  const subscription = useGet('/api/subscription')
  const config = useGet('/api/config')
  const fullCheck = fullCheckCost(config.data)
  const { environment } = useMode()
  const stats = useGet('/api/stats/overview', { params: { query: { granularity, days, time_zone: timeZone, environment } } })
  const jobs = useGet('/api/jobs', { params: { query: { limit: 5, environment } } })
  const batches = useGet('/api/batches', { params: { query: { limit: 5, environment } } })
  const feed = useGet('/api/notifications', { params: { query: { limit: 10 } } })
  const series = useMemo(() => {
    const s = stats.data?.series ?? []
    return {
      times: s.map(b => Date.parse(b.start)),
      series: ['valid', 'risky', 'invalid', 'unknown'].map(v => ({
        label: t(`verdict.${v}` as 'verdict.valid'),
        colour: VERDICT_COLOURS[v],
        values: s.map(b => b.verdicts[v] ?? 0)
      }))
    }
  }, [stats.data, t])
  const unread = (feed.data?.items ?? []).filter(n => !n.seen)
  // A new account (nothing verified yet in this environment): what to do first, before any figure.
  const fresh = jobs.data !== null && batches.data !== null && jobs.data.total === 0 && batches.data.total === 0
  const quiet = stats.data !== null && stats.data.totals.submitted === 0
  return (
    <>
      <PageTitle>{t('nav.overview')}</PageTitle>
      <HeldNotice />
      <ServiceStatus />
      <div className="grid">
        <section className="card" aria-labelledby="balance-h">
          <h2 id="balance-h">{t('overview.balance')}</h2>
          <p className="stat" data-testid="balance">
            {wallet.data ? formatNumber(wallet.data.balance) : '…'}
          </p>
          <p className="muted">
            {t('overview.tokens')} · {wallet.data ? t('overview.reserved', { n: formatNumber(wallet.data.reserved) }) : ''}
          </p>
          <Link href="/billing">{t('overview.buy')}</Link>
        </section>
        <section className="card" aria-labelledby="plan-h">
          <h2 id="plan-h">{t('overview.plan')}</h2>
          <p className="stat" data-testid="plan">
            {subscription.data ? planName(subscription.data.plan) : '…'}
          </p>
          <p className="muted">
            {subscription.data && config.data
              ? `${t('billing.verifications', { n: formatNumber(Math.floor(subscription.data.tokens_per_month / fullCheck)) })} · ${t('overview.perMonth', { n: formatNumber(subscription.data.tokens_per_month) })}`
              : ''}
          </p>
        </section>
        <section className="card" aria-labelledby="unread-h">
          <h2 id="unread-h">{t('overview.unread')}</h2>
          <p className="stat">{formatNumber(unread.length)}</p>
          <Link href="/notifications">{t('nav.notifications')}</Link>
        </section>
      </div>
      <section className="card" aria-labelledby="usage-h">
        <h2 id="usage-h">{t('overview.usage')}</h2>
        <Choice
          label={t('overview.window')}
          value={win}
          onChange={setWin}
          options={WINDOWS.map(([g, d], i) => [String(i), t(`window.${g}.${d}` as 'window.day.28')])}
        />
        <ProblemAlert problem={stats.failure?.problem ?? null} />
        {/* Rendered before the figures arrive, in boxes of fixed size: the page does not move when they do. */}
        <p className="muted">
          {stats.data
            ? t('overview.totals', {
                submitted: formatNumber(stats.data.totals.submitted),
                completed: formatNumber(stats.data.totals.completed),
                spent: formatNumber(stats.data.totals.tokens_spent)
              })
            : '…'}{' '}
          · {timeZone}
        </p>
        {/* One box of a fixed least height whatever it shows (the chart, the first steps of a new account, an empty period): nothing below moves when the figures arrive. */}
        <div className="usage-area">
          {quiet && fresh ? (
            <GetStarted />
          ) : quiet ? (
            <p className="empty" data-testid="usage-empty">
              {t('overview.usageEmpty')} <Link href="/verify">{t('overview.verifyFirst')}</Link> · <Link href="/lists">{t('overview.uploadFirst')}</Link>
            </p>
          ) : (
            <TimeChart title={t('overview.usageTable')} times={series.times} series={series.series} totalLabel={t('overview.total')} />
          )}
        </div>
        <ApiCall
          method="GET"
          path={`/api/stats/overview?granularity=${granularity}&days=${days}&time_zone=${encodeURIComponent(timeZone)}&environment=${environment}`}
        />
      </section>
      <div className="grid">
        <section className="card" aria-labelledby="recent-jobs-h">
          <h2 id="recent-jobs-h">{t('overview.recentJobs')}</h2>
          {(jobs.data?.items ?? []).length === 0 ? (
            <p className="muted recent">{jobs.loading ? '…' : t('jobs.none')}</p>
          ) : (
            <ul className="recent">
              {jobs.data!.items.map(j => (
                <li key={j.uuid}>
                  <Link href={`/jobs/${j.uuid}`}>{j.email}</Link> <VerdictBadge verdict={j.verdict} />
                  <EnvironmentBadge environment={j.environment} />{' '}
                  <span className="muted">{formatDate(Date.parse(j.created_at), { dateStyle: 'short', timeStyle: 'short' })}</span>
                </li>
              ))}
            </ul>
          )}
        </section>
        <section className="card" aria-labelledby="recent-lists-h">
          <h2 id="recent-lists-h">{t('overview.recentLists')}</h2>
          {(batches.data?.items ?? []).length === 0 ? (
            <p className="muted recent">{batches.loading ? '…' : t('lists.none')}</p>
          ) : (
            <ul className="recent">
              {batches.data!.items.map(b => (
                <li key={b.uuid}>
                  <Link href={`/lists/${b.uuid}`}>{b.name ?? b.uuid.slice(0, 8)}</Link>
                  <EnvironmentBadge environment={b.environment} />{' '}
                  <span className="muted">
                    {t(`batch.${b.status}` as 'batch.completed')} · {formatNumber(b.progress.processed)}/{formatNumber(b.progress.total)}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>
    </>
  )
}
