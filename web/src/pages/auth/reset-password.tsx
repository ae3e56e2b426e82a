import { useState, type FormEvent, type ReactNode } from 'react'
import { Button, Form } from 'react-aria-components'
import { useSearch } from 'wouter'
import { api } from '../../api.ts'
import { useI18n } from '../../i18n.tsx'
import { Field, ProblemAlert, failureOf, type Failure } from '../../ui.tsx'
import { Frame } from './frame.tsx'

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
