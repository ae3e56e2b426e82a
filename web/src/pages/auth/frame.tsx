import { useEffect, useState, type FormEvent, type ReactNode } from 'react'
import { Button, Form } from 'react-aria-components'
import { useLocation } from 'wouter'
import { api } from '../../api.ts'
import { useSession } from '../../session.tsx'
import { LanguageSwitch, useI18n } from '../../i18n.tsx'
import { ApiCall, Field, PageTitle, ProblemAlert, failureOf, type Failure } from '../../ui.tsx'

/** Where mail goes on this service: filed in the outbox (no SMTP_URL: the embedded default) or sent. */
export function useMailDelivery(): 'smtp' | 'outbox' | null {
  const [delivery, setDelivery] = useState<'smtp' | 'outbox' | null>(null)
  useEffect(() => {
    void api.GET('/api/config').then(r => {
      setDelivery(r.data?.mail_delivery ?? null)
    })
  }, [])
  return delivery
}

export function Frame({ title, children }: { title: string; children: ReactNode }): ReactNode {
  const { t } = useI18n()
  return (
    <main className="center-page">
      <div className="lang-switch">
        <LanguageSwitch />
      </div>
      <p className="brand">{t('app.name')}</p>
      <PageTitle>{title}</PageTitle>
      <div className="card">{children}</div>
    </main>
  )
}

/** The confirmation step of a sign-up: the mailed code (where it was filed, on a service without SMTP), or a new one. */
export function ConfirmCode({ email }: { email: string }): ReactNode {
  const { t } = useI18n()
  const { signIn } = useSession()
  const delivery = useMailDelivery()
  const [code, setCode] = useState('')
  const [failure, setFailure] = useState<Failure | null>(null)
  const [resent, setResent] = useState(false)
  const [, go] = useLocation()
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault()
    const r = await api.POST('/api/auth/confirm', { body: { email, code: code.trim() } })
    if (!r.data) {
      setFailure(failureOf(r.error, r.response))
      return
    }
    await signIn(r.data.access_token, r.data.expires_in)
    go('/overview')
  }
  return (
    <>
      <p role="status">{t('signup.mailed', { email })}</p>
      {delivery === 'outbox' && (
        <div className="alert info">
          {t('signup.outbox')} <code>npx svc mail show --to {email}</code>
        </div>
      )}
      <Form
        onSubmit={e => {
          void submit(e)
        }}
      >
        <Field label={t('signup.code')} name="code" value={code} onChange={setCode} isRequired inputMode="numeric" autoComplete="one-time-code" />
        <ProblemAlert problem={failure?.problem ?? null} retryAfter={failure?.retryAfter} />
        <div className="row">
          <Button type="submit">{t('signup.confirm')}</Button>
          <Button
            className="react-aria-Button secondary"
            onPress={() => {
              void api.POST('/api/auth/resend-confirmation', { body: { email } }).then(() => {
                setResent(true)
              })
            }}
          >
            {t('signup.resend')}
          </Button>
        </div>
        {resent && <p role="status">{t('signup.resent')}</p>}
      </Form>
      <ApiCall method="POST" path="/api/auth/confirm" body={{ email, code: '<code>' }} credential="none" />
    </>
  )
}
