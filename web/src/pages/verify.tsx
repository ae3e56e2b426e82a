import { useEffect, useState, type FormEvent, type ReactNode } from 'react'
import { Button, Checkbox, CheckboxGroup, Form, Label } from 'react-aria-components'
import { api, type Schemas } from '../api.ts'
import { useI18n } from '../i18n.tsx'
import { ApiCall, Field, PageTitle, ProblemAlert, failureOf, type Failure } from '../ui.tsx'
import { ResultCard } from '../components/result-card.tsx'
import { useGet } from '../queries.ts'
import { HeldNotice, useLiveChecks, useMode } from '../mode.tsx'

type Job = Schemas['Job']

/** Verify one address (live, or in the sandbox in test mode): the checks the plan allows, the answer as soon as the job ends (`wait`), or why it waits. */
export default function Verify(): ReactNode {
  const { t } = useI18n()
  const { environment } = useMode()
  const live = useLiveChecks()
  const config = useGet('/api/config')
  const subscription = useGet('/api/subscription')
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
    const body = { email: address, checks: checks as Job['checks'], environment }
    const submitted = await api.POST('/api/verify', { body })
    if (!submitted.data) {
      setFailure(failureOf(submitted.error, submitted.response))
      setBusy(false)
      return
    }
    setJob(submitted.data)
    // Read again as it moves (each read answered as soon as the job ends, or after 2 s): a
    // job held or deferred says so within seconds; one that will take its time is left to
    // the Jobs page once it says why.
    const until = Date.now() + 60_000
    for (let last = submitted.data; last.status === 'queued' && Date.now() < until; ) {
      const r = await api.GET('/api/verify/{uuid}', { params: { path: { uuid: last.uuid }, query: { wait: 2 } } })
      if (!r.data) break
      last = r.data
      setJob(r.data)
    }
    setBusy(false)
  }
  const submit = (e: FormEvent): void => {
    e.preventDefault()
    void verify(email.trim())
  }
  return (
    <>
      <PageTitle>{t('nav.verify')}</PageTitle>
      <HeldNotice />
      <div className="card">
        <Form onSubmit={submit}>
          <Field
            label={t('field.email')}
            name="email"
            type="email"
            value={email}
            onChange={setEmail}
            isRequired
            description={t(environment === 'live' && live.held ? 'verify.hintHeld' : environment === 'test' ? 'verify.hintTest' : 'verify.hint')}
          />
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
        <ApiCall method="POST" path="/api/verify" body={{ email: email || 'someone@example.com', checks, ...(environment === 'test' && { environment }) }} />
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
