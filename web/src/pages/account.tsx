import { useEffect, useState, type FormEvent, type ReactNode } from 'react'
import { Button, Form } from 'react-aria-components'
import QRCode from 'qrcode'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { LOCALES, useI18n, type Locale } from '../i18n.tsx'
import type { MessageKey } from '../messages/en.ts'
import { ApiCall, Field, PageTitle, ProblemAlert, Secret, failureOf, type Failure, scrollable } from '../ui.tsx'
import { Choice } from '../components/choice.tsx'
import { Confirm } from '../components/confirm.tsx'
import { useGet } from '../queries.ts'

/** A form's outcome: a failure to show, or a sentence that it worked. */
type Outcome = { ok: MessageKey; params?: Record<string, string> } | { failure: Failure } | null
function Said({ outcome }: { outcome: Outcome }): ReactNode {
  const { t } = useI18n()
  if (!outcome) return null
  return 'ok' in outcome ? (
    <p className="alert success" role="status">
      {t(outcome.ok, outcome.params)}
    </p>
  ) : (
    <ProblemAlert problem={outcome.failure.problem} retryAfter={outcome.failure.retryAfter} />
  )
}

/** The QR code of an otpauth URI, drawn as SVG markup (the `qrcode` library; no image from elsewhere). */
function Qr({ uri, label }: { uri: string; label: string }): ReactNode {
  const [svg, setSvg] = useState('')
  useEffect(() => {
    void QRCode.toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }).then(setSvg)
  }, [uri])
  // biome-ignore lint/security/noDangerouslySetInnerHtml: the SVG is drawn here by qrcode from the otpauth URI the API returned, never from markup
  return <div className="qr" role="img" aria-label={label} dangerouslySetInnerHTML={{ __html: svg }} />
}

function TwoFactor(): ReactNode {
  const { t } = useI18n()
  const { reloadProfile } = useSession()
  const status = useGet('/api/users/me/2fa')
  const [setup, setSetup] = useState<{ secret: string; otpauth_uri: string; backup_codes: string[] } | null>(null)
  const [code, setCode] = useState('')
  const [password, setPassword] = useState('')
  const [outcome, setOutcome] = useState<Outcome>(null)
  const enable = async (): Promise<void> => {
    const r = await api.POST('/api/users/me/2fa/enable')
    if (!r.data) {
      setOutcome({ failure: failureOf(r.error, r.response) })
      return
    }
    setSetup(r.data)
    setOutcome(null)
  }
  const verify = async (e: FormEvent): Promise<void> => {
    e.preventDefault()
    const r = await api.POST('/api/users/me/2fa/verify-setup', { body: { code: code.trim() } })
    if (r.response.status !== 204) {
      setOutcome({ failure: failureOf(r.error, r.response) })
      return
    }
    setSetup(null)
    setCode('')
    setOutcome({ ok: 'twofa.on' })
    status.reload()
    await reloadProfile()
  }
  const disable = async (e: FormEvent): Promise<void> => {
    e.preventDefault()
    const r = await api.POST('/api/users/me/2fa/disable', { body: { password, code: code.trim() } })
    if (r.response.status !== 204) {
      setOutcome({ failure: failureOf(r.error, r.response) })
      return
    }
    setPassword('')
    setCode('')
    setOutcome({ ok: 'twofa.off' })
    status.reload()
    await reloadProfile()
  }
  return (
    <section className="card" aria-labelledby="twofa-h">
      <h2 id="twofa-h">{t('twofa.title')}</h2>
      <Said outcome={outcome} />
      {status.data?.enabled ? (
        <Form
          onSubmit={e => {
            void disable(e)
          }}
        >
          <p>{t('twofa.isOn')}</p>
          <Field label={t('field.currentPassword')} type="password" value={password} onChange={setPassword} isRequired autoComplete="current-password" />
          <Field label={t('signin.code')} value={code} onChange={setCode} isRequired autoComplete="one-time-code" />
          <Button type="submit" className="react-aria-Button danger">
            {t('twofa.disable')}
          </Button>
          <ApiCall method="POST" path="/api/users/me/2fa/disable" body={{ password: '…', code: '<code>' }} />
        </Form>
      ) : setup ? (
        <Form
          onSubmit={e => {
            void verify(e)
          }}
        >
          <p>{t('twofa.scan')}</p>
          <Qr uri={setup.otpauth_uri} label={t('twofa.qr')} />
          <p>
            {t('twofa.orKey')} <code data-testid="totp-secret">{setup.secret}</code>
          </p>
          <Secret label={t('twofa.backup')} value={setup.backup_codes.join('\n')} />
          <Field label={t('signin.code')} value={code} onChange={setCode} isRequired autoComplete="one-time-code" inputMode="numeric" />
          <Button type="submit">{t('twofa.confirm')}</Button>
          <ApiCall method="POST" path="/api/users/me/2fa/verify-setup" body={{ code: '<code>' }} />
        </Form>
      ) : (
        <>
          <p>{t('twofa.isOff')}</p>
          <Button
            onPress={() => {
              void enable()
            }}
          >
            {t('twofa.enable')}
          </Button>
          <ApiCall method="POST" path="/api/users/me/2fa/enable" />
        </>
      )}
    </section>
  )
}

function Sessions(): ReactNode {
  const { t, formatDate } = useI18n()
  const sessions = useGet('/api/users/me/sessions')
  return (
    <section className="card" aria-labelledby="sessions-h">
      <h2 id="sessions-h">{t('sessions.title')}</h2>
      <div className="table-wrap" {...scrollable(t('sessions.title'))}>
        <table>
          <thead>
            <tr>
              <th scope="col">{t('sessions.started')}</th>
              <th scope="col">{t('sessions.lastUsed')}</th>
              <th scope="col">{t('sessions.method')}</th>
              <th scope="col">{t('keys.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {(sessions.data ?? []).map(s => (
              <tr key={s.uuid}>
                <td>{formatDate(Date.parse(s.started_at), { dateStyle: 'short', timeStyle: 'short' })}</td>
                <td>{formatDate(Date.parse(s.last_used_at), { dateStyle: 'short', timeStyle: 'short' })}</td>
                <td>
                  {['password', 'confirmation', 'oauth'].includes(s.method) ? t(`sessions.via.${s.method as 'password'}`) : s.method}
                  {s.client_id ? ` (${s.client_id.slice(0, 8)})` : ''}
                  {s.current ? ` · ${t('sessions.this')}` : ''}
                </td>
                <td>
                  {!s.current && (
                    <Confirm
                      label={t('sessions.revoke')}
                      title={t('sessions.revokeTitle')}
                      body={t('sessions.revokeBody')}
                      onConfirm={async () => {
                        await api.DELETE('/api/users/me/sessions/{uuid}', { params: { path: { uuid: s.uuid } } })
                        sessions.reload()
                      }}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ApiCall method="GET" path="/api/users/me/sessions" />
    </section>
  )
}

/** Account: profile, language, email and password changes, two-factor, sessions, deletion. */
export default function Account(): ReactNode {
  const { t, locale, setLocale, formatDate } = useI18n()
  const { profile, reloadProfile, signOut } = useSession()
  const [lang, setLang] = useState<Locale>(locale)
  const [newEmail, setNewEmail] = useState('')
  const [emailPassword, setEmailPassword] = useState('')
  const [current, setCurrent] = useState('')
  const [next, setNext] = useState('')
  const [code, setCode] = useState('')
  const [deletePassword, setDeletePassword] = useState('')
  const [outcomes, setOutcomes] = useState<Record<string, Outcome>>({})
  if (!profile) return null
  const said = (k: string, o: Outcome): void => {
    setOutcomes(x => ({ ...x, [k]: o }))
  }
  const changeLocale = async (l: Locale): Promise<void> => {
    setLang(l)
    const r = await api.PATCH('/api/users/me/locale', { body: { locale: l } })
    if (r.response.status === 204) {
      setLocale(l)
      said('locale', { ok: 'account.saved' })
      await reloadProfile()
    } else said('locale', { failure: failureOf(r.error, r.response) })
  }
  const changeEmail = async (e: FormEvent): Promise<void> => {
    e.preventDefault()
    const r = await api.PATCH('/api/users/{uuid}/email', {
      params: { path: { uuid: profile.uuid } },
      body: { new_email: newEmail.trim(), current_password: emailPassword, ...(profile.two_factor_enabled && { code }) }
    })
    said('email', r.response.status === 204 ? { ok: 'account.emailSent', params: { email: newEmail.trim() } } : { failure: failureOf(r.error, r.response) })
  }
  const changePassword = async (e: FormEvent): Promise<void> => {
    e.preventDefault()
    const r = await api.PATCH('/api/users/{uuid}/password', {
      params: { path: { uuid: profile.uuid } },
      body: { current_password: current, new_password: next, ...(profile.two_factor_enabled && { code }) }
    })
    said('password', r.response.status === 204 ? { ok: 'account.passwordChanged' } : { failure: failureOf(r.error, r.response) })
    if (r.response.status === 204) {
      setCurrent('')
      setNext('')
    }
  }
  const remove = async (): Promise<void> => {
    const r = await api.DELETE('/api/users/{uuid}', { params: { path: { uuid: profile.uuid } }, body: { password: deletePassword } })
    if (r.response.status === 204) {
      await signOut()
      return
    }
    said('delete', { failure: failureOf(r.error, r.response) })
  }
  return (
    <>
      <PageTitle>{t('nav.account')}</PageTitle>
      <section className="card" aria-labelledby="profile-h">
        <h2 id="profile-h">{t('account.profile')}</h2>
        <dl>
          <dt>{t('field.email')}</dt>
          <dd data-testid="profile-email">{profile.email}</dd>
          <dt>{t('account.since')}</dt>
          <dd>{formatDate(Date.parse(profile.created_at), { dateStyle: 'long' })}</dd>
        </dl>
        <Choice
          label={t('account.language')}
          value={lang}
          onChange={l => {
            void changeLocale(l)
          }}
          options={LOCALES.map(l => [l, t(`locale.${l}`)])}
        />
        <Said outcome={outcomes.locale ?? null} />
        <ApiCall method="PATCH" path="/api/users/me/locale" body={{ locale: lang }} />
      </section>
      <section className="card" aria-labelledby="email-h">
        <h2 id="email-h">{t('account.changeEmail')}</h2>
        <Form
          onSubmit={e => {
            void changeEmail(e)
          }}
        >
          <Field label={t('field.newEmail')} type="email" value={newEmail} onChange={setNewEmail} isRequired autoComplete="email" />
          <Field
            label={t('field.currentPassword')}
            type="password"
            value={emailPassword}
            onChange={setEmailPassword}
            isRequired
            autoComplete="current-password"
          />
          {profile.two_factor_enabled && <Field label={t('signin.code')} value={code} onChange={setCode} isRequired />}
          <Said outcome={outcomes.email ?? null} />
          <Button type="submit">{t('account.changeEmail')}</Button>
        </Form>
        <ApiCall method="PATCH" path={`/api/users/${profile.uuid}/email`} body={{ new_email: newEmail || 'new@example.com', current_password: '…' }} />
      </section>
      <section className="card" aria-labelledby="password-h">
        <h2 id="password-h">{t('account.changePassword')}</h2>
        <Form
          onSubmit={e => {
            void changePassword(e)
          }}
        >
          <Field label={t('field.currentPassword')} type="password" value={current} onChange={setCurrent} isRequired autoComplete="current-password" />
          <Field
            label={t('field.newPassword')}
            type="password"
            value={next}
            onChange={setNext}
            isRequired
            autoComplete="new-password"
            description={t('signup.passwordRule')}
          />
          {profile.two_factor_enabled && <Field label={t('signin.code')} value={code} onChange={setCode} isRequired />}
          <Said outcome={outcomes.password ?? null} />
          <Button type="submit">{t('account.changePassword')}</Button>
        </Form>
        <ApiCall method="PATCH" path={`/api/users/${profile.uuid}/password`} body={{ current_password: '…', new_password: '…' }} />
      </section>
      <TwoFactor />
      <Sessions />
      <section className="card" aria-labelledby="delete-h">
        <h2 id="delete-h">{t('account.delete')}</h2>
        <p className="alert warn">{t('account.deleteWarning')}</p>
        <Field
          label={t('field.currentPassword')}
          type="password"
          value={deletePassword}
          onChange={setDeletePassword}
          isRequired
          autoComplete="current-password"
        />
        <Said outcome={outcomes.delete ?? null} />
        <Confirm label={t('account.deleteButton')} title={t('account.deleteTitle')} body={t('account.deleteWarning')} onConfirm={remove} />
        <ApiCall method="DELETE" path={`/api/users/${profile.uuid}`} body={{ password: '…' }} />
      </section>
    </>
  )
}
