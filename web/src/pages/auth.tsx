import { useEffect, useState, type FormEvent, type ReactNode } from 'react'
import { Button, Form } from 'react-aria-components'
import { Link, useLocation, useSearch } from 'wouter'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { LanguageSwitch, useI18n } from '../i18n.tsx'
import { ApiCall, Field, PageTitle, ProblemAlert, failureOf, type Failure } from '../ui.tsx'

/** Where mail goes on this service: filed in the outbox (no SMTP_URL: the embedded default) or sent. */
function useMailDelivery(): 'smtp' | 'outbox' | null {
  const [delivery, setDelivery] = useState<'smtp' | 'outbox' | null>(null)
  useEffect(() => {
    void api.GET('/api/config').then(r => {
      setDelivery(r.data?.mail_delivery ?? null)
    })
  }, [])
  return delivery
}

function Frame({ title, children }: { title: string; children: ReactNode }): ReactNode {
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
function Confirm({ email }: { email: string }): ReactNode {
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

export function SignUp(): ReactNode {
  const { t, locale } = useI18n()
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [failure, setFailure] = useState<Failure | null>(null)
  const [sent, setSent] = useState(false)
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault()
    const r = await api.POST('/api/auth/register', { body: { email: email.trim(), password, locale } })
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
        <Confirm email={email.trim()} />
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
            <Button type="submit">{t('signup.submit')}</Button>
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
        <Confirm email={email.trim()} />
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

export function ResetPassword(): ReactNode {
  const { t } = useI18n()
  const token = new URLSearchParams(useSearch()).get('token') ?? ''
  const [password, setPassword] = useState('')
  const [done, setDone] = useState(false)
  const [failure, setFailure] = useState<Failure | null>(null)
  const submit = async (e: FormEvent): Promise<void> => {
    e.preventDefault()
    const r = await api.POST('/api/auth/reset-password', { body: { token, new_password: password } })
    if (r.response.status !== 204) {
      setFailure(failureOf(r.error, r.response))
      return
    }
    setDone(true)
  }
  return (
    <Frame title={t('reset.title')}>
      {done ? (
        <p role="status">
          {t('reset.done')} <a href="/signin">{t('signin.title')}</a>
        </p>
      ) : (
        <Form
          onSubmit={e => {
            void submit(e)
          }}
        >
          <Field
            label={t('field.newPassword')}
            name="new_password"
            type="password"
            value={password}
            onChange={setPassword}
            isRequired
            autoComplete="new-password"
            description={t('signup.passwordRule')}
          />
          <ProblemAlert problem={failure?.problem ?? null} retryAfter={failure?.retryAfter} />
          <Button type="submit">{t('reset.submit')}</Button>
        </Form>
      )}
    </Frame>
  )
}

export function VerifyEmailChange(): ReactNode {
  const { t } = useI18n()
  const token = new URLSearchParams(useSearch()).get('token') ?? ''
  const [state, setState] = useState<'working' | 'done' | Failure>('working')
  useEffect(() => {
    void api.POST('/api/auth/verify-email-change', { body: { token } }).then(r => {
      setState(r.response.status === 204 ? 'done' : failureOf(r.error, r.response))
    })
  }, [token])
  return (
    <Frame title={t('emailChange.title')}>
      {state === 'working' && <p role="status">{t('app.loading')}</p>}
      {state === 'done' && (
        <p role="status">
          {t('emailChange.done')} <a href="/account">{t('nav.account')}</a>
        </p>
      )}
      {typeof state === 'object' && <ProblemAlert problem={state.problem} />}
    </Frame>
  )
}
