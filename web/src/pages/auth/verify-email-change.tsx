import { useEffect, useState, type ReactNode } from 'react'
import { useSearch } from 'wouter'
import { api } from '../../api.ts'
import { useI18n } from '../../i18n.tsx'
import { ProblemAlert, failureOf, type Failure } from '../../ui.tsx'
import { Frame } from './frame.tsx'

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
