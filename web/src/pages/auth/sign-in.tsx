import { useState, type FormEvent, type ReactNode } from 'react'
import { Button, Form } from 'react-aria-components'
import { Link, useLocation } from 'wouter'
import { api } from '../../api.ts'
import { useSession } from '../../session.tsx'
import { useI18n } from '../../i18n.tsx'
import { ApiCall, Field, ProblemAlert, failureOf, type Failure } from '../../ui.tsx'
import { ConfirmCode, Frame } from './frame.tsx'

export function SignIn(): ReactNode {
  const { t } = useI18n()
  const { signIn } = useSession()
  const [, go] = useLocation()
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [challenge, setChallenge] = useState<string | null>(null)
  const [code, setCode] = useState('')
  const [unconfirmed, setUnconfirmed] = useState(false)
  const [failure, setFailure] = useState<Failure | null>(null)
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault()
    const r = await api.POST('/api/auth/login', { body: { email: email.trim(), password } })
    if (!r.data) {
      if (r.response.status === 403) {
        setUnconfirmed(true)
        return
      }
      setFailure(failureOf(r.error, r.response))
      return
    }
    setFailure(null)
    if ('temp_token' in r.data) {
      setChallenge(r.data.temp_token)
      return
    }
    await signIn(r.data.access_token, r.data.expires_in)
    go('/overview')
  }
  const verify = async (e: FormEvent): Promise<void> => {
    e.preventDefault()
    const r = await api.POST('/api/auth/2fa/verify', { body: { temp_token: challenge!, code: code.trim() } })
    if (!r.data) {
      setFailure(failureOf(r.error, r.response))
      return
    }
    await signIn(r.data.access_token, r.data.expires_in)
    go('/overview')
  }
  if (unconfirmed)
    return (
      <Frame title={t('signup.confirmTitle')}>
        <ConfirmCode email={email.trim()} />
      </Frame>
    )
  if (challenge !== null) {
    return (
      <Frame title={t('signin.twofa')}>
        <p>{t('signin.twofaHint')}</p>
        <Form
          onSubmit={e => {
            void verify(e)
          }}
        >
          <Field label={t('signin.code')} name="code" value={code} onChange={setCode} isRequired autoComplete="one-time-code" />
          <ProblemAlert problem={failure?.problem ?? null} retryAfter={failure?.retryAfter} />
          <Button type="submit">{t('signin.verify')}</Button>
        </Form>
        <ApiCall method="POST" path="/api/auth/2fa/verify" body={{ temp_token: '$TEMP', code: '<code>' }} credential="none" />
      </Frame>
    )
  }
  return (
    <Frame title={t('signin.title')}>
      <Form
        onSubmit={e => {
          void submit(e)
        }}
      >
        <Field label={t('field.email')} name="email" type="email" value={email} onChange={setEmail} isRequired autoComplete="username" />
        <Field label={t('field.password')} name="password" type="password" value={password} onChange={setPassword} isRequired autoComplete="current-password" />
        <ProblemAlert problem={failure?.problem ?? null} retryAfter={failure?.retryAfter} />
        <Button type="submit">{t('signin.submit')}</Button>
      </Form>
      <p>
        <Link href="/forgot">{t('signin.forgot')}</Link>
      </p>
      <p>
        {t('signin.noAccount')} <Link href="/signup">{t('signup.title')}</Link>
      </p>
      <ApiCall method="POST" path="/api/auth/login" body={{ email: email || 'you@example.com', password: '…' }} credential="none" />
    </Frame>
  )
}
