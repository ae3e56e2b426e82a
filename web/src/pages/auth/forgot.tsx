import { useState, type FormEvent, type ReactNode } from 'react'
import { Button, Form } from 'react-aria-components'
import { Link } from 'wouter'
import { api } from '../../api.ts'
import { useI18n } from '../../i18n.tsx'
import { ApiCall, Field, ProblemAlert, failureOf, type Failure } from '../../ui.tsx'
import { Frame, useMailDelivery } from './frame.tsx'

export function Forgot(): ReactNode {
  const { t } = useI18n()
  const [email, setEmail] = useState('')
  const [sent, setSent] = useState(false)
  const [failure, setFailure] = useState<Failure | null>(null)
  const delivery = useMailDelivery()
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault()
    const r = await api.POST('/api/auth/forgot-password', { body: { email: email.trim() } })
    if (r.response.status !== 204) {
      setFailure(failureOf(r.error, r.response))
      return
    }
    setSent(true)
  }
  return (
    <Frame title={t('forgot.title')}>
      {sent ? (
        <>
          <p role="status">{t('forgot.sent', { email: email.trim() })}</p>
          {delivery === 'outbox' && (
            <div className="alert info">
              {t('signup.outbox')} <code>npx svc mail show --to {email.trim()}</code>
            </div>
          )}
        </>
      ) : (
        <Form
          onSubmit={e => {
            void submit(e)
          }}
        >
          <Field label={t('field.email')} name="email" type="email" value={email} onChange={setEmail} isRequired autoComplete="email" />
          <ProblemAlert problem={failure?.problem ?? null} retryAfter={failure?.retryAfter} />
          <Button type="submit">{t('forgot.submit')}</Button>
        </Form>
      )}
      <p>
        <Link href="/signin">{t('signin.title')}</Link>
      </p>
      <ApiCall method="POST" path="/api/auth/forgot-password" body={{ email: email || 'you@example.com' }} credential="none" />
    </Frame>
  )
}
