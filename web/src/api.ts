import { createClient, type ApiClient } from '../../src/client/api.ts'
import type { components } from '../../src/client/generated/schema.d.ts'

export type Schemas = components['schemas']
export type Problem = Schemas['Problem']

/**
 * The console's connection to the service: the generated client of the public API (the
 * console is its first client), same origin, the access token held in memory only. The
 * session survives a reload through `POST /api/auth/refresh` and its HttpOnly
 * `svc_refresh` cookie; an access token about to expire is refreshed before a request.
 */
let accessToken: string | null = null
let expiresAt = 0
let refreshing: Promise<string | null> | null = null
const listeners = new Set<(signedIn: boolean) => void>()

/** Whether the session changed (signed in, refreshed, signed out). */
export function onSessionChange(listener: (signedIn: boolean) => void): () => void {
  listeners.add(listener)
  return () => {
    listeners.delete(listener)
  }
}

/** Holds a new access token (valid `expiresIn` seconds), or none. */
export function setAccessToken(token: string | null, expiresIn = 0): void {
  accessToken = token
  expiresAt = token ? Date.now() + expiresIn * 1000 : 0
  for (const l of listeners) l(token !== null)
}

const raw = createClient({ baseUrl: window.location.origin })

/**
 * Trades the `svc_refresh` cookie for an access token. Without a cookie the service
 * answers 200 with a null body (no failing request on a signed-out first load).
 * @returns the new access token, or null when there is no session.
 */
export async function refreshSession(): Promise<string | null> {
  refreshing ??= (async () => {
    try {
      const r = await raw.POST('/api/auth/refresh')
      const body = r.data
      if (!r.response.ok || !body) {
        setAccessToken(null)
        return null
      }
      setAccessToken(body.access_token, body.expires_in)
      return body.access_token
    } catch {
      return accessToken
    } finally {
      refreshing = null
    }
  })()
  return await refreshing
}

/** The client every page calls: the access token attached, refreshed when within 30 s of its end, and once more after a 401. */
export const api: ApiClient = createClient({ baseUrl: window.location.origin, token: () => accessToken })
api.use({
  async onRequest({ request }) {
    if (accessToken && Date.now() > expiresAt - 30_000 && !request.url.includes('/api/auth/')) {
      const token = await refreshSession()
      if (token) request.headers.set('authorization', `Bearer ${token}`)
    }
    return request
  },
  async onResponse({ request, response }) {
    // Once more after a 401 (the token ended early: a session elsewhere refreshed it), for reads only (a body is read once).
    if (response.status !== 401 || !accessToken || request.method !== 'GET' || request.url.includes('/api/auth/')) return response
    const token = await refreshSession()
    if (!token) return response
    const again = new Request(request, { headers: new Headers(request.headers) })
    again.headers.set('authorization', `Bearer ${token}`)
    return await fetch(again)
  }
})

export const signedIn = (): boolean => accessToken !== null

/** The problem of an error answer (RFC 9457), whatever came. */
function problemOf(error: unknown, status?: number): Problem {
  if (error && typeof error === 'object' && 'code' in error && 'status' in error) return error as Problem
  return {
    type: 'about:blank',
    title: 'Error',
    status: status ?? 0,
    detail: typeof error === 'string' ? error : 'the service did not answer as expected',
    code: 'console.unexpected'
  }
}

/** Downloads what `path` answers (with the session) as a file named `filename`. */
export async function download(path: string, accept: string, filename: string): Promise<void> {
  const res = await fetch(path, { headers: { authorization: `Bearer ${accessToken ?? ''}`, accept } })
  if (!res.ok) throw problemOf(await res.json().catch(() => null), res.status)
  const url = URL.createObjectURL(await res.blob())
  const a = document.createElement('a')
  a.href = url
  a.download = filename
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => {
    URL.revokeObjectURL(url)
  }, 10_000)
}

/**
 * Sends a file's bytes as they are (`PUT`, a list's file kept beside its batch), with the
 * session. @returns null when it was taken, else the failure to show.
 */
export async function upload(path: string, file: Blob, type: string): Promise<{ problem: Problem; retryAfter: number | null } | null> {
  const res = await fetch(path, { method: 'PUT', headers: { authorization: `Bearer ${accessToken ?? ''}`, 'content-type': type }, body: file })
  if (res.ok) return null
  return { problem: problemOf(await res.json().catch(() => null), res.status), retryAfter: null }
}
