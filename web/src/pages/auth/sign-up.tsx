import { useState, type FormEvent, type ReactNode } from 'react'
import { Button, Form } from 'react-aria-components'
import { Link } from 'wouter'
import { api } from '../../api.ts'
import { useI18n } from '../../i18n.tsx'
import { ApiCall, Field, ProblemAlert, failureOf, type Failure } from '../../ui.tsx'
import { ConfirmCode, Frame } from './frame.tsx'

export function SignUp(): ReactNode {
  const { t, locale } = useI18n()
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [failure, setFailure] = useState<Failure | null>(null)
  const [sent, setSent] = useState(false)
  // Sign-up screens the address (its domain's DNS): seconds on a slow resolver, said as such, and not sent twice.
  const [busy, setBusy] = useState(false)
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault()
    if (busy) return
    setBusy(true)
    const r = await api.POST('/api/auth/register', { body: { email: email.trim(), password, locale } }).finally(() => {
      setBusy(false)
    })
    if (r.response.status !== 204) {
      setFailure(failureOf(r.error, r.response))
      return
    }
    setFailure(null)
    setSent(true)
  }
  return (
    <Frame title={t('signup.title')}>
      {sent ? (
        <ConfirmCode email={email.trim()} />
      ) : (
        <>
          <Form
            onSubmit={e => {
              void submit(e)
            }}
          >
            <Field label={t('field.email')} name="email" type="email" value={email} onChange={setEmail} isRequired autoComplete="email" />
            <Field
              label={t('field.password')}
              name="password"
              type="password"
              value={password}
              onChange={setPassword}
              isRequired
              autoComplete="new-password"
              description={t('signup.passwordRule')}
              minLength={8}
            />
            <ProblemAlert problem={failure?.problem ?? null} retryAfter={failure?.retryAfter} />
            {/* Not React Aria's isPending: its announcement names the button by id, and outlives the button once the page moves on (axe: an image with no name). */}
            <Button type="submit" isDisabled={busy} aria-busy={busy}>
              {busy ? t('signup.working') : t('signup.submit')}
            </Button>
            {busy && (
              <p role="status" className="muted">
                {t('signup.workingHint')}
              </p>
            )}
          </Form>
          <p>
            {t('signup.haveAccount')} <Link href="/signin">{t('signin.title')}</Link>
          </p>
          <ApiCall method="POST" path="/api/auth/register" body={{ email: email || 'you@example.com', password: '…', locale }} credential="none" />
        </>
      )}
    </Frame>
  )
}
