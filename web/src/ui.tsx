import { useEffect, useLayoutEffect, useRef, useState, type ReactNode } from 'react'
import { Button, FieldError, Input, Label, Text, TextField, type TextFieldProps } from 'react-aria-components'
import type { Problem } from './api.ts'
import { useI18n } from './i18n.tsx'
import { PROBLEM_TITLES_FR } from './messages/problems-fr.ts'

/**
 * A labelled text field (React Aria's TextField: label, input, description and error tied
 * together for assistive technology). A field is committed, and its errors re-validated, when
 * it loses focus: when the pointer goes down on the form's button. Its error line keeps the
 * height it had while it showed an error, so that what is below does not move between the
 * button's press and its release, and that click is not lost.
 */
export function Field({
  label,
  description,
  errorMessage,
  ...props
}: TextFieldProps & { label: string; description?: string; errorMessage?: string }): ReactNode {
  return (
    <TextField {...props}>
      {({ isInvalid }) => (
        <>
          <Label>{label}</Label>
          <Input />
          {description && <Text slot="description">{description}</Text>}
          <ErrorLine invalid={isInvalid}>
            <FieldError>{errorMessage}</FieldError>
          </ErrorLine>
        </>
      )}
    </TextField>
  )
}

/** The error line of a field: at least as tall as it was while it showed an error (see `Field`). */
function ErrorLine({ invalid, children }: { invalid: boolean; children: ReactNode }): ReactNode {
  const line = useRef<HTMLDivElement>(null)
  const [kept, setKept] = useState(0)
  useLayoutEffect(() => {
    const height = line.current?.offsetHeight ?? 0
    if (invalid && height > kept) setKept(height)
  }, [invalid, kept])
  // Set through the CSSOM (element.style), which the Content Security Policy allows.
  return (
    <div ref={line} style={kept > 0 ? { minHeight: `${kept}px` } : undefined}>
      {children}
    </div>
  )
}

/**
 * A problem answered by the service, said in words: its detail, the field errors, a wait
 * for a lockout (429 shown as a wait, with its Retry-After when given), and a link to the
 * page about it (the problem's `type`).
 */
export function ProblemAlert({ problem, retryAfter }: { problem: Problem | null; retryAfter?: number | null }): ReactNode {
  const { t, locale } = useI18n()
  if (!problem) return null
  if (problem.status === 429) {
    return (
      <div className="alert warn" role="status">
        {t('problem.wait')} {retryAfter ? t('problem.waitFor', { s: String(retryAfter) }) : t('problem.waitLater')}{' '}
        <span className="muted">({problem.detail})</span>
      </div>
    )
  }
  // The title in the viewer's language by the problem's reason; the occurrence's own sentence (`detail`) is the API's, marked as English for readers of another language.
  const reason = (problem.code ?? '').split('.').pop() ?? ''
  const title = locale === 'fr' && Object.hasOwn(PROBLEM_TITLES_FR, reason) ? PROBLEM_TITLES_FR[reason] : problem.title
  return (
    <div className="alert error" role="alert">
      <strong>{title}</strong>
      {locale === 'en' ? ': ' : ' — '}
      <span lang="en">{problem.detail}</span>
      {problem.errors && problem.errors.length > 0 && (
        <ul>
          {problem.errors.map(e => (
            <li key={e.path}>
              <code>{e.path}</code>: {e.message}
            </li>
          ))}
        </ul>
      )}
      {problem.type.startsWith('/problems/') && (
        <>
          {' '}
          <a href={problem.type} target="_blank" rel="noreferrer">
            {t('problem.more')}
          </a>
        </>
      )}
    </div>
  )
}

/** The answer of an API call as the console keeps it: the problem (and its Retry-After) when it failed. */
export interface Failure {
  problem: Problem
  retryAfter: number | null
}
export function failureOf(error: unknown, response: Response): Failure {
  const problem: Problem =
    error && typeof error === 'object' && 'code' in error
      ? (error as Problem)
      : {
          type: 'about:blank',
          title: response.statusText || 'Error',
          status: response.status,
          detail: 'the service answered an error',
          code: 'console.unexpected'
        }
  const retry = Number(response.headers.get('retry-after'))
  return { problem, retryAfter: Number.isFinite(retry) && retry > 0 ? retry : null }
}

/**
 * "Copy as curl": the API call an action makes, with
 * the credential elided (`$TOKEN`, `$KEY`), so the console teaches the API.
 */
export function ApiCall({
  method,
  path,
  body,
  credential = 'token'
}: {
  method: string
  path: string
  body?: unknown
  credential?: 'token' | 'key' | 'cookie' | 'none'
}): ReactNode {
  const { t } = useI18n()
  const [copied, setCopied] = useState(false)
  const lines = [`curl -sSf -X ${method} "$B${path}"`]
  if (credential === 'token') lines.push('-H "authorization: Bearer $TOKEN"')
  if (credential === 'key') lines.push('-H "authorization: Bearer $KEY"')
  if (credential === 'cookie') lines.push('-b "svc_refresh=$REFRESH"')
  if (body !== undefined) lines.push("-H 'content-type: application/json'", `-d '${JSON.stringify(body).replaceAll("'", "'\\''")}'`)
  const text = `B=${window.location.origin}\n${lines.join(' \\\n  ')}`
  return (
    <details className="api">
      <summary>{t('api.show')}</summary>
      <pre>
        <code>{text}</code>
      </pre>
      <Button
        className="react-aria-Button secondary"
        onPress={() => {
          void navigator.clipboard?.writeText(text).then(() => {
            setCopied(true)
          })
        }}
      >
        {copied ? t('api.copied') : t('api.copy')}
      </Button>
    </details>
  )
}

/** A secret shown once (a raw key, a signing secret, backup codes), with a copy button. */
export function Secret({ label, value }: { label: string; value: string }): ReactNode {
  const { t } = useI18n()
  const [copied, setCopied] = useState(false)
  return (
    <div className="alert success" role="status">
      <p>
        <strong>{label}</strong> — {t('secret.once')}
      </p>
      <p className="secret" data-testid="secret">
        {value}
      </p>
      <Button
        className="react-aria-Button secondary"
        onPress={() => {
          void navigator.clipboard?.writeText(value).then(() => {
            setCopied(true)
          })
        }}
      >
        {copied ? t('api.copied') : t('secret.copy')}
      </Button>
    </div>
  )
}

export function VerdictBadge({ verdict }: { verdict: string | null | undefined }): ReactNode {
  const { t } = useI18n()
  if (!verdict) return <span className="muted">—</span>
  return <span className={`badge ${verdict}`}>{t(`verdict.${verdict}` as 'verdict.valid')}</span>
}

/**
 * Tokens of a full verification: every check a plan allows by default, at the catalogue's
 * costs (`GET /api/config`); what a plan's tokens buy, in the customer's unit, is tokens
 * over this. 1 while the catalogue is not read yet (never a division by zero).
 */
export function fullCheckCost(config: { default_checks: string[]; check_costs: Record<string, number> } | null | undefined): number {
  return Math.max(
    1,
    (config?.default_checks ?? []).reduce((n, c) => n + (config?.check_costs[c] ?? 0), 0)
  )
}

/** A page's heading, focused when the page changes so that screen readers hear where they are. */
export function PageTitle({ children }: { children: string }): ReactNode {
  useEffect(() => {
    document.title = `${children} — Email verification`
  }, [children])
  return (
    <h1 tabIndex={-1} id="page-title">
      {children}
    </h1>
  )
}

/**
 * The props of a region that scrolls sideways (a wide table at 390 px): reachable by
 * keyboard and named, so that its overflow can be scrolled without a mouse (WCAG 2.1.1).
 */
export function scrollable(label: string): { tabIndex: 0; role: 'region'; 'aria-label': string } {
  return { tabIndex: 0, role: 'region', 'aria-label': label }
}

/**
 * The header cell maker of a table sorted by the API (`sort`, `order`): a button per column
 * that sorts by it (again: the other way), `aria-sort` on the sorted one.
 */
export function sortHeader<S extends string>(sort: S, order: 'asc' | 'desc', sortBy: (s: S) => void): (s: S, label: string, className?: string) => ReactNode {
  return (s, label, className) => (
    <th scope="col" className={className} aria-sort={sort === s ? (order === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <Button
        className="react-aria-Button link"
        onPress={() => {
          sortBy(s)
        }}
      >
        {label}
        {sort === s ? (order === 'asc' ? ' ▲' : ' ▼') : ''}
      </Button>
    </th>
  )
}
