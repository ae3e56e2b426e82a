import { useEffect, useState, type FormEvent, type ReactNode } from 'react'
import { Button, Checkbox, CheckboxGroup, Form, Label } from 'react-aria-components'
import { api, type Schemas } from '../api.ts'
import { useI18n } from '../i18n.tsx'
import { ApiCall, Field, PageTitle, ProblemAlert, failureOf, type Failure } from '../ui.tsx'
import { ResultCard } from '../components/result-card.tsx'
import { useGet } from '../queries.ts'

type Job = Schemas['Job']

/** Verify one address: the checks the plan allows, the answer as soon as the job ends (`wait`). */
export default function Verify(): ReactNode {
  const { t } = useI18n()
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
