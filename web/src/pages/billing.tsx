import { useMemo, useState, type ReactNode } from 'react'
import { Button, Radio, RadioGroup, Label } from 'react-aria-components'
import { api } from '../api.ts'
import { TimeChart } from '../chart.tsx'
import { useI18n } from '../i18n.tsx'
import { ApiCall, PageTitle, ProblemAlert, failureOf, type Failure, scrollable, sortHeader, fullCheckCost } from '../ui.tsx'
import { useGet } from '../queries.ts'

type TxSort = 'occurred_at' | 'amount' | 'transaction_type'

/** Billing: the plan grid, checkout and portal (redirects to Stripe), the wallet's transactions grouped by job, and the balance over time. */
export default function Billing({ outcome }: { outcome?: string }): ReactNode {
  const { t, locale, formatNumber, formatMoney, formatDate, timeZone, planName } = useI18n()
  const config = useGet('/api/config')
  const fullCheck = fullCheckCost(config.data)
  const subscription = useGet('/api/subscription')
  const [cycle, setCycle] = useState<'monthly' | 'yearly'>('monthly')
  const [sort, setSort] = useState<TxSort>('occurred_at')
  const [order, setOrder] = useState<'asc' | 'desc'>('desc')
  const groups = useGet('/api/wallet/transactions/grouped', { params: { query: { sort, order, limit: 25 } } })
  const history = useGet('/api/wallet/balance-history', { params: { query: { granularity: 'day', days: 28, time_zone: timeZone } } })
  const [failure, setFailure] = useState<Failure | null>(null)
  const available = config.data?.billing_available === true
  const checkout = async (body: { plan: string; cycle: 'monthly' | 'yearly' } | { top_up_quantity: number }): Promise<void> => {
    const r = await api.POST('/api/billing/checkout', { body: { ...body, locale } })
    if (!r.data) {
      setFailure(failureOf(r.error, r.response))
      return
    }
    window.location.assign(r.data.url)
  }
  const portal = async (): Promise<void> => {
    const r = await api.POST('/api/billing/portal', { body: { locale } })
    if (!r.data) {
      setFailure(failureOf(r.error, r.response))
      return
    }
    window.location.assign(r.data.url)
  }
  const chart = useMemo(() => {
    const s = history.data?.series ?? []
    return { times: s.map(b => Date.parse(b.end)), series: [{ label: t('billing.balance'), colour: '#0969da', values: s.map(b => b.balance) }] }
  }, [history.data, t])
  const sortBy = (s: TxSort): void => {
    if (s === sort) setOrder(o => (o === 'asc' ? 'desc' : 'asc'))
    else {
      setSort(s)
      setOrder('desc')
    }
  }
  const head = sortHeader(sort, order, sortBy)
  const current = subscription.data?.plan.code
  return (
    <>
      <PageTitle>{t('nav.billing')}</PageTitle>
      {outcome === 'success' && (
        <p className="alert success" role="status">
          {t('billing.success')}
        </p>
      )}
      {outcome === 'cancel' && (
        <p className="alert info" role="status">
          {t('billing.cancelled')}
        </p>
      )}
      {config.data && !available && (
        <p className="alert info" data-testid="billing-unavailable">
          {t('billing.unavailable')}
        </p>
      )}
      <ProblemAlert problem={failure?.problem ?? null} />
      <section className="card" aria-labelledby="plans-h">
        <h2 id="plans-h">{t('billing.plans')}</h2>
        <p>
          {t('billing.current', {
            plan: subscription.data ? planName(subscription.data.plan) : '…',
            status: subscription.data ? t(`subscription.${subscription.data.status}`) : ''
          })}
          {subscription.data?.current_period_end
            ? ` · ${t('billing.until', { date: formatDate(Date.parse(subscription.data.current_period_end), { dateStyle: 'medium' }) })}`
            : ''}
        </p>
        <RadioGroup
          value={cycle}
          onChange={v => {
            setCycle(v as 'monthly' | 'yearly')
          }}
          orientation="horizontal"
        >
          <Label>{t('billing.cycle')}</Label>
          <div className="row">
            <Radio value="monthly">
              <span className="dot" aria-hidden="true" />
              {t('billing.monthly')}
            </Radio>
            <Radio value="yearly">
              <span className="dot" aria-hidden="true" />
              {t('billing.yearly')}
            </Radio>
          </div>
        </RadioGroup>
        <div className="grid">
          {(config.data?.plans ?? []).map(p => (
            <article key={p.code} className="card" aria-labelledby={`plan-${p.code}`}>
              <h3 id={`plan-${p.code}`}>
                {planName(p)}
                {p.code === current ? ` · ${t('billing.yours')}` : ''}
              </h3>
              <p className="stat">{formatMoney(p.prices[cycle].cents, p.prices[cycle].currency)}</p>
              <ul>
                <li>
                  <strong>{t('billing.verifications', { n: formatNumber(Math.floor(p.tokens_per_month / fullCheck)) })}</strong>{' '}
                  <span className="muted">{t('billing.tokens', { n: formatNumber(p.tokens_per_month) })}</span>
                </li>
                <li>{t('billing.batch', { n: formatNumber(p.limits.max_batch_size) })}</li>
                <li>{t('billing.rate', { n: formatNumber(p.limits.rate_limit_per_minute) })}</li>
                <li>{t('billing.keys', { n: formatNumber(p.limits.api_keys) })}</li>
              </ul>
              {p.code !== 'free' && p.code !== current && (
                <Button
                  isDisabled={!available}
                  onPress={() => {
                    void checkout({ plan: p.code, cycle })
                  }}
                >
                  {t('billing.choose', { plan: planName(p) })}
                </Button>
              )}
            </article>
          ))}
        </div>
        <div className="row">
          {(config.data?.top_up.packs ?? []).map(pack => (
            <Button
              key={pack.quantity}
              className="react-aria-Button secondary"
              isDisabled={!available}
              onPress={() => {
                void checkout({ top_up_quantity: pack.quantity })
              }}
            >
              {t('billing.topUp', { n: formatNumber(pack.tokens), price: formatMoney(pack.price_cents, config.data!.top_up.currency) })}
            </Button>
          ))}
          {subscription.data?.has_billing_account && (
            <Button
              className="react-aria-Button secondary"
              isDisabled={!available}
              onPress={() => {
                void portal()
              }}
            >
              {t('billing.portal')}
            </Button>
          )}
        </div>
        <ApiCall method="POST" path="/api/billing/checkout" body={{ plan: 'pro', cycle, locale }} />
      </section>
      <section className="card" aria-labelledby="history-h">
        <h2 id="history-h">{t('billing.history')}</h2>
        <TimeChart title={t('billing.historyTable')} times={chart.times} series={chart.series} />
        <ApiCall method="GET" path={`/api/wallet/balance-history?granularity=day&days=28&time_zone=${encodeURIComponent(timeZone)}`} />
      </section>
      <section className="card" aria-labelledby="tx-h">
        <h2 id="tx-h">{t('billing.transactions')}</h2>
        <div className="table-wrap" {...scrollable(t('billing.transactions'))}>
          <table>
            <thead>
              <tr>
                {head('occurred_at', t('billing.when'))}
                {head('transaction_type', t('billing.type'))}
                {head('amount', t('billing.amount'))}
                <th scope="col">{t('billing.job')}</th>
              </tr>
            </thead>
            <tbody>
              {(groups.data?.items ?? []).map((g, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: grants without a job have no id of their own; the list is read once and never reordered
                <tr key={`${g.job_uuid ?? 'grant'}-${i}`}>
                  <td>{formatDate(Date.parse(g.occurred_at), { dateStyle: 'short', timeStyle: 'short' })}</td>
                  <td>{g.transactions.map(x => t(`tx.${x.transaction_type}` as 'tx.grant')).join(' → ')}</td>
                  <td>{formatNumber(g.amount)}</td>
                  <td className="mono">{g.job_uuid ? g.job_uuid.slice(0, 8) : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <ApiCall method="GET" path={`/api/wallet/transactions/grouped?sort=${sort}&order=${order}`} />
      </section>
    </>
  )
}
