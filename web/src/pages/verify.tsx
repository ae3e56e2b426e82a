import { useEffect, useState, type FormEvent, type ReactNode } from 'react'
import { Button, Checkbox, CheckboxGroup, Form, Label } from 'react-aria-components'
import { api, type Schemas } from '../api.ts'
import { useI18n } from '../i18n.tsx'
import { ApiCall, Field, PageTitle, ProblemAlert, VerdictBadge, failureOf, useLoad, type Failure, scrollable } from '../ui.tsx'

type Job = Schemas['Job']

/** A result as a card: verdict, reason in plain words, score, flags, each check with its outcome, the suggestion as a link to verify it. */
export function ResultCard({ job, onVerify }: { job: Job; onVerify?: (email: string) => void }): ReactNode {
  const { t, formatNumber, formatDate } = useI18n()
  const r = job.result
  if (!r) return <p role="status">{t(`job.status.${job.status}` as 'job.status.queued')}</p>
  return (
    <article className="card" aria-labelledby="result-h" data-testid="result">
      <h2 id="result-h">
        {job.email} <VerdictBadge verdict={r.verdict} />
      </h2>
      <p>
        <strong data-testid="reason">{t(`reason.${r.reason}` as 'reason.accepted_email')}</strong> — {t(`why.${r.reason}` as 'why.accepted_email')}
      </p>
      <p className="muted">
        {t('result.action')}: {t(`action.${r.verdict}` as 'action.valid')}
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
                <td className="mono">{c.detail ?? ''}</td>
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

/** Verify one address: the checks the plan allows, the answer as soon as the job ends (`wait`). */
export default function Verify(): ReactNode {
  const { t } = useI18n()
  const config = useLoad(async () => await api.GET('/api/config'), [])
  const subscription = useLoad(async () => await api.GET('/api/subscription'), [])
  const allowed = config.data?.plans.find(p => p.code === subscription.data?.limits_plan)?.allowed_checks ?? []
  const [email, setEmail] = useState('')
  const [checks, setChecks] = useState<string[]>([])
  const [job, setJob] = useState<Job | null>(null)
  const [failure, setFailure] = useState<Failure | null>(null)
  const [busy, setBusy] = useState(false)
  useEffect(() => {
    if (allowed.length > 0 && checks.length === 0) setChecks(allowed)
  }, [allowed.join(',')]) // eslint-disable-line react-hooks/exhaustive-deps
  const verify = async (address: string): Promise<void> => {
    setBusy(true)
    setFailure(null)
    setJob(null)
    const body = { email: address, checks: checks as Job['checks'] }
    const submitted = await api.POST('/api/verify', { body })
    if (!submitted.data) {
      setFailure(failureOf(submitted.error, submitted.response))
      setBusy(false)
      return
    }
    setJob(submitted.data)
    const done = await api.GET('/api/verify/{uuid}', { params: { path: { uuid: submitted.data.uuid }, query: { wait: 30 } } })
    if (done.data) setJob(done.data)
    setBusy(false)
  }
  const submit = (e: FormEvent): void => {
    e.preventDefault()
    void verify(email.trim())
  }
  return (
    <>
      <PageTitle>{t('nav.verify')}</PageTitle>
      <div className="card">
        <Form onSubmit={submit}>
          <Field label={t('field.email')} name="email" type="email" value={email} onChange={setEmail} isRequired description={t('verify.hint')} />
          <CheckboxGroup value={checks} onChange={setChecks}>
            <Label>{t('verify.checks')}</Label>
            <div className="row">
              {allowed.map(c => (
                <Checkbox key={c} value={c}>
                  <span className="box" aria-hidden="true" />
                  {t(`check.${c}` as 'check.syntax')}
                </Checkbox>
              ))}
            </div>
          </CheckboxGroup>
          <ProblemAlert problem={failure?.problem ?? null} retryAfter={failure?.retryAfter} />
          <Button type="submit" isDisabled={busy}>
            {busy ? t('verify.working') : t('verify.submit')}
          </Button>
        </Form>
        <ApiCall method="POST" path="/api/verify" body={{ email: email || 'someone@example.com', checks }} />
        {job && <ApiCall method="GET" path={`/api/verify/${job.uuid}?wait=30`} />}
      </div>
      {job && (
        <ResultCard
          job={job}
          onVerify={address => {
            setEmail(address)
            void verify(address)
          }}
        />
      )}
    </>
  )
}
