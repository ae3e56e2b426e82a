import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react'
import { api, onSessionChange, refreshSession, setAccessToken, type Schemas } from './api.ts'
import { useI18n, isLocale, takeChosenLocale } from './i18n.tsx'

type Profile = Schemas['Profile']
interface SessionState {
  status: 'loading' | 'signed-out' | 'signed-in'
  profile: Profile | null
  /** Holds the access token of a sign-in (confirm, login, second factor) and loads the profile. */
  signIn: (token: string, expiresIn: number) => Promise<void>
  signOut: () => Promise<void>
  reloadProfile: () => Promise<void>
}

const Ctx = createContext<SessionState | null>(null)

/**
 * The signed-in account for the console: restored at load through the refresh cookie (the
 * access token lives in memory only), followed in the account's locale.
 */
export function SessionProvider({ children }: { children: ReactNode }): ReactNode {
  const { setLocale } = useI18n()
  const [status, setStatus] = useState<SessionState['status']>('loading')
  const [profile, setProfile] = useState<Profile | null>(null)

  const reloadProfile = useCallback(async () => {
    const r = await api.GET('/api/users/me')
    if (r.data) {
      // A language chosen on the sign-in page, in this tab, becomes the account's: it is not forgotten at sign-in.
      const chosen = takeChosenLocale()
      if (chosen !== null && chosen !== r.data.locale) {
        const changed = await api.PATCH('/api/users/me/locale', { body: { locale: chosen } })
        if (changed.response.ok) r.data.locale = chosen
      }
      setProfile(r.data)
      if (isLocale(r.data.locale)) setLocale(r.data.locale, false)
      setStatus('signed-in')
    } else {
      setProfile(null)
      setStatus('signed-out')
    }
  }, [setLocale])

  useEffect(() => {
    let live = true
    void (async () => {
      const token = await refreshSession()
      if (!live) return
      if (token) await reloadProfile()
      else setStatus('signed-out')
    })()
    const off = onSessionChange(isIn => {
      if (!isIn) {
        setStatus('signed-out')
        setProfile(null)
      }
    })
    return () => {
      live = false
      off()
    }
  }, [reloadProfile])

  const signIn = useCallback(
    async (token: string, expiresIn: number) => {
      setAccessToken(token, expiresIn)
      await reloadProfile()
    },
    [reloadProfile]
  )

  const signOut = useCallback(async () => {
    await api.POST('/api/auth/logout').catch(() => undefined)
    setAccessToken(null)
  }, [])

  return <Ctx.Provider value={{ status, profile, signIn, signOut, reloadProfile }}>{children}</Ctx.Provider>
}

export function useSession(): SessionState {
  const s = useContext(Ctx)
  if (!s) throw new Error('useSession outside SessionProvider')
  return s
}
