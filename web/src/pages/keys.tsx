import { useState, type FormEvent, type ReactNode } from 'react'
import { Button, Checkbox, CheckboxGroup, Dialog, DialogTrigger, Form, Heading, Label, Modal, Radio, RadioGroup } from 'react-aria-components'
import { api, type Schemas } from '../api.ts'
import { useI18n } from '../i18n.tsx'
import { ApiCall, Field, PageTitle, ProblemAlert, Secret, failureOf, type Failure, scrollable } from '../ui.tsx'
import { Confirm } from '../components/confirm.tsx'
import { useGet } from '../queries.ts'

type ApiKey = Schemas['ApiKey']
type CheckName = ApiKey['enabled_checks'][number]

/** Checkboxes of names, each labelled as a person reads it. */
function Names({
  label,
  value,
  options,
  onChange,
  prefix
}: {
  label: string
  value: string[]
  options: readonly string[]
  onChange: (v: string[]) => void
  prefix?: 'check'
}): ReactNode {
  const { t } = useI18n()
  return (
    <CheckboxGroup value={value} onChange={onChange}>
      <Label>{label}</Label>
      <div className="row">
        {options.map(o => (
          <Checkbox key={o} value={o}>
            <span className="box" aria-hidden="true" />
            {prefix ? t(`check.${o}` as 'check.syntax') : <code>{o}</code>}
          </Checkbox>
        ))}
      </div>
    </CheckboxGroup>
  )
}

/** Rename a key or change its checks (a dialog with a form), then reload. */
function EditKey({ apiKey, allowed, onDone }: { apiKey: ApiKey; allowed: readonly string[]; onDone: () => void }): ReactNode {
  const { t } = useI18n()
  const [name, setName] = useState(apiKey.name)
  const [checks, setChecks] = useState<string[]>(apiKey.enabled_checks)
  const [failure, setFailure] = useState<Failure | null>(null)
  return (
    <DialogTrigger>
      <Button className="react-aria-Button secondary">{t('keys.edit')}</Button>
      <Modal isDismissable>
        <Dialog>
          {({ close }) => (
            <Form
              onSubmit={e => {
                e.preventDefault()
                void api
                  .PATCH('/api/keys/{uuid}', { params: { path: { uuid: apiKey.uuid } }, body: { name, enabled_checks: checks as CheckName[] } })
                  .then(r => {
                    if (r.data) {
                      onDone()
                      close()
                    } else setFailure(failureOf(r.error, r.response))
                  })
              }}
            >
              <Heading slot="title">{t('keys.editTitle', { name: apiKey.name })}</Heading>
              <Field label={t('keys.name')} value={name} onChange={setName} isRequired maxLength={100} />
              <Names label={t('keys.checks')} value={checks} options={allowed} onChange={setChecks} prefix="check" />
              <ProblemAlert problem={failure?.problem ?? null} />
              <div className="row">
                <Button type="submit">{t('action.save')}</Button>
                <Button className="react-aria-Button secondary" onPress={close}>
                  {t('action.cancel')}
                </Button>
              </div>
              <ApiCall method="PATCH" path={`/api/keys/${apiKey.uuid}`} body={{ name, enabled_checks: checks }} />
            </Form>
          )}
        </Dialog>
      </Modal>
    </DialogTrigger>
  )
}

/** API keys and agents: create (the raw key or token shown once), rename, change checks, revoke. */
export default function Keys(): ReactNode {
  const { t, formatDate } = useI18n()
  const config = useGet('/api/config')
  const subscription = useGet('/api/subscription')
  const keys = useGet('/api/keys')
  const agents = useGet('/api/agents', { params: { query: { limit: 96 } } })
  const plan = config.data?.plans.find(p => p.code === subscription.data?.limits_plan)
  const allowedChecks = plan?.allowed_checks ?? []
  const [name, setName] = useState('')
  const [environment, setEnvironment] = useState<'live' | 'test'>('live')
  const [scopes, setScopes] = useState<string[]>(['email:verify:single', 'email:verify:bulk', 'results:read'])
  const [checks, setChecks] = useState<string[] | null>(null)
  const [created, setCreated] = useState<string | null>(null)
  const [failure, setFailure] = useState<Failure | null>(null)
  const [agentName, setAgentName] = useState('')
  const [agentScopes, setAgentScopes] = useState<string[]>(['email:verify:single', 'results:read'])
  const [agentToken, setAgentToken] = useState<string | null>(null)
  const [agentFailure, setAgentFailure] = useState<Failure | null>(null)
  const body = { name, environment, scopes, enabled_checks: (checks ?? allowedChecks) as CheckName[] }
  const create = async (e: FormEvent): Promise<void> => {
    e.preventDefault()
    const r = await api.POST('/api/keys', { body: body as never })
    if (!r.data) {
      setFailure(failureOf(r.error, r.response))
      return
    }
    setFailure(null)
    setCreated(r.data.raw_key)
    setName('')
    keys.reload()
  }
  const createAgent = async (e: FormEvent): Promise<void> => {
    e.preventDefault()
    const r = await api.POST('/api/agents', { body: { name: agentName, scopes: agentScopes } })
    if (!r.data) {
      setAgentFailure(failureOf(r.error, r.response))
      return
    }
    setAgentFailure(null)
    setAgentToken(r.data.token)
    setAgentName('')
    agents.reload()
  }
  return (
    <>
      <PageTitle>{t('nav.keys')}</PageTitle>
      <section className="card" aria-labelledby="new-key-h">
        <h2 id="new-key-h">{t('keys.create')}</h2>
        {created && <Secret label={t('keys.raw')} value={created} />}
        <Form
          onSubmit={e => {
            void create(e)
          }}
        >
          <Field label={t('keys.name')} name="name" value={name} onChange={setName} isRequired maxLength={100} />
          <RadioGroup
            value={environment}
            onChange={v => {
              setEnvironment(v as 'live' | 'test')
            }}
          >
            <Label>{t('keys.environment')}</Label>
            <Radio value="live">
              <span className="dot" aria-hidden="true" />
              {t('keys.live')}
            </Radio>
            <Radio value="test">
              <span className="dot" aria-hidden="true" />
              {t('keys.test')}
            </Radio>
          </RadioGroup>
          <Names label={t('keys.scopes')} value={scopes} options={plan?.allowed_scopes ?? []} onChange={setScopes} />
          <Names label={t('keys.checks')} value={checks ?? allowedChecks} options={allowedChecks} onChange={setChecks} prefix="check" />
          <ProblemAlert problem={failure?.problem ?? null} />
          <Button type="submit">{t('keys.createButton')}</Button>
        </Form>
        <ApiCall method="POST" path="/api/keys" body={body} />
      </section>
      <section className="card" aria-labelledby="keys-h">
        <h2 id="keys-h">{t('keys.list')}</h2>
        <div className="table-wrap" {...scrollable(t('keys.list'))}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('keys.name')}</th>
                <th scope="col">{t('keys.environment')}</th>
                <th scope="col">{t('keys.prefix')}</th>
                <th scope="col">{t('keys.scopes')}</th>
                <th scope="col">{t('keys.created')}</th>
                <th scope="col">{t('keys.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {(keys.data ?? []).map(k => (
                <tr key={k.uuid}>
                  <td>{k.name}</td>
                  <td>{t(`keys.${k.environment}`)}</td>
                  <td className="mono">{k.key_prefix}…</td>
                  <td>{k.scopes.join(', ')}</td>
                  <td>
                    {formatDate(Date.parse(k.created_at), { dateStyle: 'short' })}
                    {k.revoked_at ? ` · ${t('keys.revoked')}` : ''}
                  </td>
                  <td className="row">
                    {!k.revoked_at && (
                      <>
                        <EditKey apiKey={k} allowed={allowedChecks} onDone={keys.reload} />
                        <Confirm
                          label={t('keys.revoke')}
                          title={t('keys.revokeTitle', { name: k.name })}
                          body={t('keys.revokeBody')}
                          onConfirm={async () => {
                            await api.DELETE('/api/keys/{uuid}', { params: { path: { uuid: k.uuid } } })
                            keys.reload()
                          }}
                        />
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <ApiCall method="DELETE" path="/api/keys/{uuid}" />
      </section>
      <section className="card" aria-labelledby="agents-h">
        <h2 id="agents-h">{t('agents.title')}</h2>
        <p className="muted">{t('agents.hint')}</p>
        {agentToken && <Secret label={t('agents.token')} value={agentToken} />}
        <Form
          onSubmit={e => {
            void createAgent(e)
          }}
        >
          <Field label={t('keys.name')} name="agent-name" value={agentName} onChange={setAgentName} isRequired maxLength={100} />
          <Names label={t('keys.scopes')} value={agentScopes} options={plan?.allowed_scopes ?? []} onChange={setAgentScopes} />
          <ProblemAlert problem={agentFailure?.problem ?? null} />
          <Button type="submit">{t('agents.create')}</Button>
        </Form>
        <ApiCall method="POST" path="/api/agents" body={{ name: agentName, scopes: agentScopes }} />
        <div className="table-wrap" {...scrollable(t('agents.title'))}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('keys.name')}</th>
                <th scope="col">{t('keys.scopes')}</th>
                <th scope="col">{t('keys.prefix')}</th>
                <th scope="col">{t('keys.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {(agents.data?.items ?? []).map(a => (
                <tr key={a.uuid}>
                  <td>{a.name}</td>
                  <td>{a.scopes.join(', ')}</td>
                  <td className="mono">{a.token_prefix}…</td>
                  <td>
                    {a.status === 'usable' ? (
                      <Confirm
                        label={t('keys.revoke')}
                        title={t('keys.revokeTitle', { name: a.name })}
                        body={t('agents.revokeBody')}
                        onConfirm={async () => {
                          await api.DELETE('/api/agents/{uuid}', { params: { path: { uuid: a.uuid } } })
                          agents.reload()
                        }}
                      />
                    ) : (
                      t('keys.revoked')
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </>
  )
}
