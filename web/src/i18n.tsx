import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react'
import { Button } from 'react-aria-components'
import { en, type MessageKey } from './messages/en.ts'
import { fr } from './messages/fr.ts'
import { api, signedIn } from './api.ts'

/** The console's languages (the interface's `locales` of `GET /api/config`). */
export const LOCALES = ['en', 'fr'] as const
export type Locale = (typeof LOCALES)[number]
export const isLocale = (x: unknown): x is Locale => typeof x === 'string' && (LOCALES as readonly string[]).includes(x)

const CATALOGUES: Record<Locale, Readonly<Record<MessageKey, string>>> = { en, fr }
const STORED = 'svc.locale'

/** The language of a visitor before an account says: the one chosen here before, else the browser's first that we speak. */
function initialLocale(): Locale {
  try {
    const stored = window.localStorage.getItem(STORED)
    if (isLocale(stored)) return stored
  } catch {
    /* storage refused: fall through */
  }
  for (const tag of navigator.languages ?? [navigator.language]) {
    const base = tag.toLowerCase().split('-')[0]
    if (isLocale(base)) return base
  }
  return 'en'
}

export interface I18n {
  locale: Locale
  /** Switches language; `persist` keeps the choice in this browser (the account's locale is kept by the API). */
  setLocale: (locale: Locale, persist?: boolean) => void
  /** The words of `key` in the current language, `{name}` replaced from `params`. */
  t: (key: MessageKey, params?: Record<string, string | number>) => string
  /** A plan's name in the language: the catalogue's own plans by code (`plan.<code>`), an operator's other plans as the catalogue names them. */
  planName: (plan: { code: string; name: string }) => string
  /** The plural category of `n` in the language (Intl.PluralRules): French says « 0 tâche », English "0 jobs". */
  plural: (n: number) => 'one' | 'other'
  /** A number in the language's notation (Intl.NumberFormat). */
  formatNumber: (n: number) => string
  /** An instant (ms since the epoch) in the viewer's time zone (Intl.DateTimeFormat). */
  formatDate: (ms: number, options?: Intl.DateTimeFormatOptions) => string
  /** An amount of money in minor units (cents) of an ISO 4217 currency. */
  formatMoney: (cents: number, currency: string) => string
  /** The viewer's IANA time zone (the browser's), sent with the charts' queries. */
  timeZone: string
}

const Ctx = createContext<I18n | null>(null)

/** English and French, dates, numbers and money with Intl, in the viewer's time zone; `<html lang>` follows. */
export function I18nProvider({ children }: { children: ReactNode }): ReactNode {
  const [locale, setLocaleState] = useState<Locale>(initialLocale)
  const setLocale = useCallback((l: Locale, persist = true) => {
    setLocaleState(l)
    if (persist) {
      try {
        window.localStorage.setItem(STORED, l)
      } catch {
        /* storage refused: this page only */
      }
    }
  }, [])
  useEffect(() => {
    document.documentElement.lang = locale
  }, [locale])
  const value = useMemo<I18n>(() => {
    const words = CATALOGUES[locale]
    const numbers = new Intl.NumberFormat(locale)
    const plurals = new Intl.PluralRules(locale)
    const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone
    const dates = new Map<string, Intl.DateTimeFormat>()
    return {
      locale,
      setLocale,
      timeZone,
      t: (key, params) => {
        const text = words[key] ?? en[key] ?? key
        return params ? text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole)) : text
      },
      planName: plan => (Object.hasOwn(words, `plan.${plan.code}`) ? words[`plan.${plan.code}` as MessageKey] : plan.name),
      formatNumber: n => numbers.format(n),
      plural: n => (plurals.select(n) === 'one' ? 'one' : 'other'),
      formatDate: (ms, options = { dateStyle: 'medium', timeStyle: 'short' }) => {
        const k = JSON.stringify(options)
        let f = dates.get(k)
        if (!f) {
          f = new Intl.DateTimeFormat(locale, { timeZone, ...options })
          dates.set(k, f)
        }
        return Number.isFinite(ms) ? f.format(ms) : '—'
      },
      formatMoney: (cents, currency) => new Intl.NumberFormat(locale, { style: 'currency', currency: currency.toUpperCase() }).format(cents / 100)
    }
  }, [locale, setLocale])
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>
}

export function useI18n(): I18n {
  const v = useContext(Ctx)
  if (!v) throw new Error('useI18n outside I18nProvider')
  return v
}

const CHOSEN = 'svc.locale.chosen'

/** Remembers, for this tab, a language chosen while signed out: the next sign-in makes it the account's (see `takeChosenLocale`). */
function markChosenSignedOut(l: Locale): void {
  try {
    window.sessionStorage.setItem(CHOSEN, l)
  } catch {
    /* storage refused: the account's locale wins at sign-in */
  }
}

/** The language chosen in this tab before signing in, once (then forgotten), or null. */
export function takeChosenLocale(): Locale | null {
  try {
    const l = window.sessionStorage.getItem(CHOSEN)
    window.sessionStorage.removeItem(CHOSEN)
    return isLocale(l) ? l : null
  } catch {
    return null
  }
}

/**
 * The language switch: each language named in itself. Signed in, the choice is the
 * account's locale (`PATCH /api/users/me/locale`, which also sets the language of its mail);
 * signed out, this browser remembers it (and sign-up sends it).
 */
export function LanguageSwitch(): ReactNode {
  const { locale, setLocale, t } = useI18n()
  const choose = (l: Locale): void => {
    setLocale(l)
    if (signedIn()) void api.PATCH('/api/users/me/locale', { body: { locale: l } })
    else markChosenSignedOut(l)
  }
  return (
    // biome-ignore lint/a11y/useSemanticElements: a row of two toggle buttons; a fieldset would ask for a visible legend
    <div role="group" aria-label={t('nav.language')} className="row lang">
      {LOCALES.map(l => (
        <Button
          key={l}
          className="react-aria-Button link"
          lang={l}
          aria-pressed={l === locale}
          onPress={() => {
            choose(l)
          }}
        >
          {en[`locale.${l}`]}
        </Button>
      ))}
    </div>
  )
}
