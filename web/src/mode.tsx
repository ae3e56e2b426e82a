import { createContext, useCallback, useContext, useState, type ReactNode } from 'react'
import { Button, Switch } from 'react-aria-components'
import { useQuery } from '@tanstack/react-query'
import { api } from './api.ts'
import { useI18n } from './i18n.tsx'
import { useGet } from './queries.ts'

/** Where the console's work runs: the sandbox (`test`: simulated answers, free) or for real (`live`). */
export type Environment = 'live' | 'test'

interface Mode {
  environment: Environment
  setEnvironment: (e: Environment) => void
}

const Ctx = createContext<Mode | null>(null)
const KEY = 'svc.environment'

/** The stored choice (this browser's; live when none, or when storage is refused). */
function stored(): Environment {
  try {
    return localStorage.getItem(KEY) === 'test' ? 'test' : 'live'
  } catch {
    return 'live'
  }
}

/**
 * The console's test mode, as the leaders' dashboards have it: a switch that makes Verify and
 * Lists run in the sandbox (`environment: "test"` in what they send) and the lists, jobs and
 * overview show that environment's data (`?environment=`). Kept in this browser.
 */
export function ModeProvider({ children }: { children: ReactNode }): ReactNode {
  const [environment, set] = useState<Environment>(stored)
  const setEnvironment = useCallback((e: Environment) => {
    set(e)
    try {
      localStorage.setItem(KEY, e)
    } catch {
      /* storage refused: the choice lasts for this page */
    }
  }, [])
  return <Ctx.Provider value={{ environment, setEnvironment }}>{children}</Ctx.Provider>
}

/** The current environment and the way to change it. */
export function useMode(): Mode {
  const m = useContext(Ctx)
  if (!m) throw new Error('useMode outside ModeProvider')
  return m
}

/** The test-mode switch (in the navigation). */
export function ModeSwitch(): ReactNode {
  const { t } = useI18n()
  const { environment, setEnvironment } = useMode()
  return (
    <Switch
      className="react-aria-Switch mode-switch"
      isSelected={environment === 'test'}
      onChange={on => {
        setEnvironment(on ? 'test' : 'live')
      }}
    >
      <span className="track" aria-hidden="true" />
      {t('mode.switch')}
    </Switch>
  )
}

/** The band every page shows in test mode: what it means, and the way back. */
export function ModeBanner(): ReactNode {
  const { t } = useI18n()
  const { environment, setEnvironment } = useMode()
  if (environment !== 'test') return null
  return (
    <div className="mode-banner" role="status" data-testid="test-mode">
      <strong>{t('mode.banner')}</strong> {t('mode.bannerDetail')}{' '}
      <Button
        className="react-aria-Button link"
        onPress={() => {
          setEnvironment('live')
        }}
      >
        {t('mode.leave')}
      </Button>
    </div>
  )
}

/** A result's environment, marked: "Test" on the sandbox's (live ones carry no mark, as in the leaders' dashboards). */
export function EnvironmentBadge({ environment }: { environment: Environment }): ReactNode {
  const { t } = useI18n()
  if (environment !== 'test') return null
  return (
    <span className="badge test" data-testid="env-test">
      {t('mode.test')}
    </span>
  )
}

/** What `/readyz` says about egress: whether live checks are held, and why (in the customer's words, never the operator's detail). */
export interface LiveChecks {
  held: boolean
  /** `dns_failing`, `port_25_blocked`, `proxy_failing`, or null. */
  problem: string | null
}

/**
 * Whether live checks are held now (`GET /readyz`: egress failing), read again every 30 s
 * while a page shows it: a hold that starts or ends while the page is open is seen.
 */
export function useLiveChecks(): LiveChecks {
  const q = useQuery({
    queryKey: ['readyz'],
    queryFn: async ({ signal }) => {
      const r = await api.GET('/readyz', { signal })
      const reasons = r.response.status === 503 && r.error && 'reasons' in r.error ? r.error.reasons : []
      return reasons.find(x => x.component === 'egress')?.problem ?? null
    },
    refetchInterval: 30_000
  })
  const problem = q.data ?? null
  return { held: problem !== null, problem }
}

/** A duration in whole minutes or hours, in words of the locale ("1 hour", "45 minutes"). */
function useDuration(): (seconds: number) => string {
  const { locale } = useI18n()
  return (seconds: number) => {
    const hours = seconds >= 3600 && seconds % 3600 === 0
    const unit = hours ? 'hour' : 'minute'
    const n = hours ? seconds / 3600 : Math.max(1, Math.round(seconds / 60))
    return new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'long' }).format(n)
  }
}

/**
 * Said at once on every page that starts live work while live checks are held: that they
 * are, why in the customer's words, how long a check waits (its tokens reserved), what
 * happens then, and what to do (test mode now, or wait). Nothing in test mode: the sandbox
 * needs no mail server.
 */
export function HeldNotice(): ReactNode {
  const { t } = useI18n()
  const { environment, setEnvironment } = useMode()
  const live = useLiveChecks()
  const config = useGet('/api/config')
  const duration = useDuration()
  if (environment === 'test' || !live.held) return null
  const hold = config.data?.egress_hold_s ?? 3600
  return (
    <div className="alert warn" role="status" data-testid="held-notice">
      <strong>{t('held.title')}</strong>
      <p>{t(`held.why.${live.problem}` as 'held.why.dns_failing')}</p>
      <p>{t('held.wait', { hold: duration(hold) })}</p>
      <p>
        {t('held.todo')}{' '}
        <Button
          className="react-aria-Button link"
          onPress={() => {
            setEnvironment('test')
          }}
        >
          {t('held.useTest')}
        </Button>
      </p>
    </div>
  )
}
