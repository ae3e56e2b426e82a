import { useState, type FormEvent, type ReactNode } from 'react'
import { Button, Checkbox, CheckboxGroup, FieldError, Form, Label, Switch } from 'react-aria-components'
import { Link, useLocation } from 'wouter'
import { api, type Schemas } from '../api.ts'
import { useI18n } from '../i18n.tsx'
import { ApiCall, Field, PageTitle, ProblemAlert, Secret, failureOf, type Failure, scrollable } from '../ui.tsx'
import { Confirm } from '../components/confirm.tsx'
import { useGet } from '../queries.ts'

type Endpoint = Schemas['WebhookEndpoint']
const EVENTS = ['job.completed', 'batch.completed'] as const

function Events({ value, onChange }: { value: string[]; onChange: (v: string[]) => void }): ReactNode {
  const { t } = useI18n()
  return (
    <CheckboxGroup value={value} onChange={onChange} isRequired>
      <Label>{t('webhooks.events')}</Label>
      <div className="row">
        {EVENTS.map(e => (
          <Checkbox key={e} value={e}>
            <span className="box" aria-hidden="true" />
            <code>{e}</code>
          </Checkbox>
        ))}
      </div>
      {/* The browser's own message would point at a visually hidden checkbox: said here instead. */}
      <FieldError>{t('webhooks.eventsRequired')}</FieldError>
    </CheckboxGroup>
  )
}

/** One endpoint: edit, enable or disable, test-fire, and its deliveries log. */
function EndpointView({ uuid }: { uuid: string }): ReactNode {
  const { t, formatDate } = useI18n()
  const endpoint = useGet('/api/webhooks/{uuid}', { params: { path: { uuid } } })
  const deliveries = useGet('/api/webhooks/{uuid}/deliveries', { params: { path: { uuid }, query: { limit: 50 } } })
  const [edit, setEdit] = useState<{ url: string; events: string[]; description: string } | null>(null)
  const [failure, setFailure] = useState<Failure | null>(null)
  const [fired, setFired] = useState<string | null>(null)
  const [, go] = useLocation()
  const e = endpoint.data
  if (!e) return <ProblemAlert problem={endpoint.failure?.problem ?? null} />
  const form = edit ?? { url: e.url, events: e.events, description: e.description ?? '' }
  const save = async (ev: FormEvent): Promise<void> => {
    ev.preventDefault()
    const r = await api.PATCH('/api/webhooks/{uuid}', {
      params: { path: { uuid } },
      body: { url: form.url, events: form.events as Endpoint['events'], description: form.description || null }
    })
    if (!r.data) {
      setFailure(failureOf(r.error, r.response))
      return
    }
    setFailure(null)
    setEdit(null)
    endpoint.reload()
  }
  const setStatus = async (active: boolean): Promise<void> => {
    await api.PATCH('/api/webhooks/{uuid}', { params: { path: { uuid } }, body: { status: active ? 'active' : 'disabled' } })
    endpoint.reload()
  }
  const fire = async (): Promise<void> => {
    const r = await api.POST('/api/webhooks/{uuid}/test', { params: { path: { uuid } } })
    setFired(r.data ? t('webhooks.fired', { status: String(r.data.response_status ?? r.data.error ?? '—') }) : failureOf(r.error, r.response).problem.detail)
    deliveries.reload()
  }
  return (
    <>
      <p>
        <Link href="/webhooks">← {t('nav.webhooks')}</Link>
      </p>
      <section className="card" aria-labelledby="endpoint-h">
        <h2 id="endpoint-h" className="mono">
          {e.url}
        </h2>
        <Switch
          isSelected={e.status === 'active'}
          onChange={v => {
            void setStatus(v)
          }}
        >
          <span className="track" aria-hidden="true" />
          {t('webhooks.active')}
        </Switch>
        {e.disabled_reason && <p className="alert warn">{t(`webhooks.disabled.${e.disabled_reason}` as 'webhooks.disabled.requested')}</p>}
        <Form
          onSubmit={ev => {
            void save(ev)
          }}
        >
          <Field
            label={t('webhooks.url')}
            value={form.url}
            onChange={url => {
              setEdit({ ...form, url })
            }}
            isRequired
            type="url"
          />
          <Events
            value={form.events}
            onChange={events => {
              setEdit({ ...form, events })
            }}
          />
          <Field
            label={t('webhooks.description')}
            value={form.description}
            onChange={description => {
              setEdit({ ...form, description })
            }}
          />
          <ProblemAlert problem={failure?.problem ?? null} />
          <div className="row">
            <Button type="submit">{t('action.save')}</Button>
            <Button
              className="react-aria-Button secondary"
              onPress={() => {
                void fire()
              }}
            >
              {t('webhooks.test')}
            </Button>
            <Confirm
              label={t('webhooks.delete')}
              title={t('webhooks.deleteTitle')}
              body={t('webhooks.deleteBody')}
              onConfirm={async () => {
                await api.DELETE('/api/webhooks/{uuid}', { params: { path: { uuid } } })
                go('/webhooks')
              }}
            />
          </div>
          {fired && <p role="status">{fired}</p>}
        </Form>
        <ApiCall method="POST" path={`/api/webhooks/${uuid}/test`} />
      </section>
      <section className="card" aria-labelledby="deliveries-h">
        <h2 id="deliveries-h">{t('webhooks.deliveries')}</h2>
        <div className="table-wrap" {...scrollable(t('webhooks.deliveries'))}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('webhooks.when')}</th>
                <th scope="col">{t('webhooks.event')}</th>
                <th scope="col">{t('webhooks.status')}</th>
                <th scope="col">{t('webhooks.attempt')}</th>
                <th scope="col">{t('webhooks.job')}</th>
              </tr>
            </thead>
            <tbody>
              {(deliveries.data?.items ?? []).map(d => (
                <tr key={`${d.delivery_uuid}-${d.attempt}`}>
                  <td>{formatDate(Date.parse(d.timestamp), { dateStyle: 'short', timeStyle: 'medium' })}</td>
                  <td>
                    <code>{d.event}</code>
                    {d.test ? ` (${t('webhooks.testMark')})` : ''}
                  </td>
                  <td>
                    {d.response_status ?? d.error ?? '—'} {d.succeeded ? '✓' : '✗'}
                  </td>
                  <td>{d.attempt}</td>
                  <td className="mono">{d.job_uuid.slice(0, 8)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <ApiCall method="GET" path={`/api/webhooks/${uuid}/deliveries`} />
      </section>
    </>
  )
}

/** Webhooks: create (the signing secret shown once), and the endpoints. */
export default function Webhooks({ uuid }: { uuid?: string }): ReactNode {
  const { t } = useI18n()
  const list = useGet('/api/webhooks', undefined, [uuid])
  const [url, setUrl] = useState('')
  const [events, setEvents] = useState<string[]>(['job.completed'])
  const [description, setDescription] = useState('')
  const [secret, setSecret] = useState<string | null>(null)
  const [failure, setFailure] = useState<Failure | null>(null)
  if (uuid)
    return (
      <>
        <PageTitle>{t('webhooks.endpoint')}</PageTitle>
        <EndpointView uuid={uuid} />
      </>
    )
  const create = async (e: FormEvent): Promise<void> => {
    e.preventDefault()
    const r = await api.POST('/api/webhooks', { body: { url, events: events as Endpoint['events'], ...(description && { description }) } })
    if (!r.data) {
      setFailure(failureOf(r.error, r.response))
      return
    }
    setFailure(null)
    setSecret(r.data.secret)
    setUrl('')
    setDescription('')
    list.reload()
  }
  return (
    <>
      <PageTitle>{t('nav.webhooks')}</PageTitle>
      <section className="card" aria-labelledby="new-hook-h">
        <h2 id="new-hook-h">{t('webhooks.create')}</h2>
        {secret && <Secret label={t('webhooks.secret')} value={secret} />}
        <Form
          onSubmit={e => {
            void create(e)
          }}
        >
          <Field label={t('webhooks.url')} name="url" type="url" value={url} onChange={setUrl} isRequired description={t('webhooks.urlHint')} />
          <Events value={events} onChange={setEvents} />
          <Field label={t('webhooks.description')} name="description" value={description} onChange={setDescription} />
          <ProblemAlert problem={failure?.problem ?? null} />
          <Button type="submit">{t('webhooks.createButton')}</Button>
        </Form>
        <ApiCall method="POST" path="/api/webhooks" body={{ url: url || 'https://example.com/hook', events, description }} />
      </section>
      <section className="card" aria-labelledby="hooks-h">
        <h2 id="hooks-h">{t('webhooks.list')}</h2>
        {(list.data ?? []).length === 0 ? (
          <p className="muted">{t('webhooks.none')}</p>
        ) : (
          <ul>
            {list.data!.map(w => (
              <li key={w.uuid}>
                <Link href={`/webhooks/${w.uuid}`}>{w.url}</Link>{' '}
                <span className="muted">
                  {w.events.join(', ')} · {t(`webhooks.state.${w.status}` as 'webhooks.state.active')}
                  {w.environment === 'test' && ` · ${t('webhooks.sandbox')}`}
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  )
}
