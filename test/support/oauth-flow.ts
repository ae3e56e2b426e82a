import { createHash, randomBytes } from 'node:crypto'
import { record } from './service.ts'

/** A PKCE pair computed here with node:crypto (RFC 7636 §4.1–4.2, S256): the tests' oracle. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** A request to `base` without following redirects; a form body when `form` is given. */
export async function raw(base: string, method: string, path: string, options: { form?: Record<string, string>; cookie?: string } = {}): Promise<Response> {
  const res = await fetch(base + path, {
    method,
    redirect: 'manual',
    headers: { ...(options.form && { 'content-type': 'application/x-www-form-urlencoded' }), ...(options.cookie && { cookie: options.cookie }) },
    body: options.form ? new URLSearchParams(options.form).toString() : undefined
  })
  record(method, path, res.status)
  return res
}

export const authorizeUrl = (params: Record<string, string | undefined>): string =>
  `/oauth/authorize?${new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString()}`

/**
 * The authorization flow as a browser without JavaScript posts it: the authorize request,
 * the consent page's sign-in, approve; the code and state from the redirect.
 */
export async function authorizeByForms(
  base: string,
  input: { client_id: string; redirect_uri: string; email: string; password: string; challenge: string; scope?: string; state?: string }
): Promise<{ code: string; state: string | null }> {
  const r = await raw(
    base,
    'GET',
    authorizeUrl({
      client_id: input.client_id,
      redirect_uri: input.redirect_uri,
      response_type: 'code',
      code_challenge: input.challenge,
      code_challenge_method: 'S256',
      scope: input.scope,
      state: input.state ?? 'xyz-123'
    })
  )
  const req = new URL(r.headers.get('location')!, base).searchParams.get('req')!
  const { pre, cookie: preCookie } = await consentPage(base, req)
  const signin = await raw(base, 'POST', '/oauth/consent', {
    form: { req, pre, action: 'signin', email: input.email, password: input.password },
    cookie: preCookie
  })
  const cookie = /svc_consent=[^;]+/.exec(signin.headers.get('set-cookie') ?? '')![0]
  const csrf = /name="csrf" value="([^"]+)"/.exec(await signin.text())![1]
  const approved = await raw(base, 'POST', '/oauth/consent', { form: { req, csrf, action: 'approve' }, cookie })
  const to = new URL(approved.headers.get('location')!)
  return { code: to.searchParams.get('code')!, state: to.searchParams.get('state') }
}

/** The consent page as a browser first gets it: its sign-in form's token and the pre-sign-in cookie that goes with it. */
export async function consentPage(base: string, req: string): Promise<{ pre: string; cookie: string; html: string }> {
  const page = await raw(base, 'GET', `/oauth/consent?req=${encodeURIComponent(req)}`)
  const html = await page.text()
  return {
    pre: /name="pre" value="([^"]+)"/.exec(html)?.[1] ?? '',
    cookie: /svc_consent_pre=[^;]+/.exec(page.headers.get('set-cookie') ?? '')?.[0] ?? '',
    html
  }
}

/** POST /oauth/token with a form; the status, JSON body and headers. */
export async function tokenRequest(base: string, form: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }> {
  const r = await raw(base, 'POST', '/oauth/token', { form })
  return { status: r.status, body: await r.json(), headers: r.headers }
}

/** A registered client's access and refresh tokens for `email`, by forms (registration, consent, exchange). */
export async function grantFor(
  base: string,
  input: { email: string; password: string; scope?: string; redirect_uri?: string }
): Promise<{ client_id: string; access_token: string; refresh_token: string; scope: string }> {
  const redirectUri = input.redirect_uri ?? 'http://127.0.0.1:9/callback'
  const reg = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'An assistant', redirect_uris: [redirectUri], ...(input.scope !== undefined && { scope: input.scope }) })
  })
  const clientId = ((await reg.json()) as { client_id: string }).client_id
  const { verifier, challenge } = pkce()
  const { code } = await authorizeByForms(base, {
    client_id: clientId,
    redirect_uri: redirectUri,
    email: input.email,
    password: input.password,
    challenge,
    scope: input.scope
  })
  const t = await tokenRequest(base, { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: redirectUri, code_verifier: verifier })
  if (t.status !== 200) throw new Error(`token: ${t.status} ${JSON.stringify(t.body)}`)
  return { client_id: clientId, ...t.body }
}
