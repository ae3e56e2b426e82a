import type { ReactNode } from 'react'
import { Button } from 'react-aria-components'
import type { Schemas } from '../api.ts'
import { useI18n } from '../i18n.tsx'
import { VerdictBadge, scrollable } from '../ui.tsx'
import { EnvironmentBadge } from '../mode.tsx'

type Job = Schemas['Job']

/**
 * A job without its answer yet: queued, or deferred and why (held while this service cannot
 * reach mail servers, until its deadline; or greylisted, asked again at `retry_at`), in the
 * customer's words, with the times in the viewer's zone.
 */
function Pending({ job }: { job: Job }): ReactNode {
  const { t, formatDate } = useI18n()
  const at = (iso: string | null | undefined): string => (iso ? formatDate(Date.parse(iso), { dateStyle: 'medium', timeStyle: 'short' }) : '—')
  const d = job.deferral
  return (
    <article className="card" aria-labelledby="pending-h" data-testid="pending">
      <h2 id="pending-h">
        {job.email} <EnvironmentBadge environment={job.environment} />
      </h2>
      <p role="status" data-testid="job-status" className={d?.reason === 'egress_blocked' ? 'alert warn' : undefined}>
        <strong>{t(d?.reason === 'egress_blocked' ? 'job.status.held' : (`job.status.${job.status}` as 'job.status.queued'))}</strong>
        {' — '}
        {d?.reason === 'egress_blocked'
          ? t('job.held', { deadline: at(d.deadline_at) })
          : d?.reason === 'greylisted'
            ? t('job.greylisted', { retry: at(job.retry_at), deadline: at(d.deadline_at) })
            : t('job.waiting')}
      </p>
    </article>
  )
}

/** A result as a card: verdict, reason in plain words, score, flags, each check with its outcome, the suggestion as a link to verify it. */
export function ResultCard({ job, onVerify }: { job: Job; onVerify?: (email: string) => void }): ReactNode {
  const { t, formatNumber, formatDate } = useI18n()
  const r = job.result
  if (!r) return <Pending job={job} />
  return (
    <article className="card" aria-labelledby="result-h" data-testid="result">
      <h2 id="result-h">
        {job.email} <VerdictBadge verdict={r.verdict} />
        <EnvironmentBadge environment={job.environment} />
      </h2>
      <p>
        <strong data-testid="reason">{t(`reason.${r.reason}` as 'reason.accepted_email')}</strong> — {t(`why.${r.reason}` as 'why.accepted_email')}
      </p>
      <p className="muted">
        {t('result.action')} {t(`action.${r.verdict}` as 'action.valid')}
      </p>
      <dl className="grid">
        <div>
          <dt>{t('result.score')}</dt>
          <dd className="stat">{formatNumber(r.score)}</dd>
        </div>
        <div>
          <dt>{t('result.flags')}</dt>
          <dd>{r.flags.length === 0 ? '—' : r.flags.map(f => t(`flag.${f}` as 'flag.free')).join(', ')}</dd>
        </div>
        <div>
          <dt>{t('result.mx')}</dt>
          <dd className="mono">{r.mx ? r.mx.host : '—'}</dd>
        </div>
        <div>
          <dt>{t('result.checked')}</dt>
          <dd>
            {formatDate(Date.parse(r.checked_at), { dateStyle: 'medium', timeStyle: 'medium' })}
            {r.sandbox ? ` · ${t('result.sandbox')}` : ''}
          </dd>
        </div>
      </dl>
      {r.did_you_mean && (
        <p className="alert warn">
          {t('result.didYouMean')}{' '}
          {onVerify ? (
            <Button
              className="react-aria-Button link"
              onPress={() => {
                onVerify(r.did_you_mean!)
              }}
            >
              {r.did_you_mean}
            </Button>
          ) : (
            <strong>{r.did_you_mean}</strong>
          )}
        </p>
      )}
      <h3>{t('result.checks')}</h3>
      <div className="table-wrap" {...scrollable(t('result.checks'))}>
        <table>
          <thead>
            <tr>
              <th scope="col">{t('result.check')}</th>
              <th scope="col">{t('result.outcome')}</th>
              <th scope="col">{t('result.detail')}</th>
              <th scope="col">{t('result.duration')}</th>
            </tr>
          </thead>
          <tbody>
            {r.checks.map(c => (
              <tr key={c.name}>
                <td>{t(`check.${c.name}` as 'check.syntax')}</td>
                <td>{t(`outcome.${c.outcome}` as 'outcome.pass')}</td>
                {/* What a check saw, in the words of the servers and resolvers it asked (an SMTP reply, a DNS answer): kept as said, marked English. */}
                <td className="mono" lang="en">
                  {c.detail ?? ''}
                </td>
                <td>{formatNumber(c.duration_ms)} ms</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {r.smtp && (
        <p className="muted mono">
          SMTP {r.smtp.code} {r.smtp.enhanced_code ?? ''} {r.smtp.message}
        </p>
      )}
      <p>
        <a href="/reference/results" target="_blank" rel="noreferrer">
          {t('result.reference')}
        </a>
      </p>
    </article>
  )
}
