import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { clientById } from '../../commands/oauth/check-authorization.ts'
import { issueCode } from '../../commands/oauth/issue-code.ts'
import { completeTwoFactor } from '../../flows/sign-in/complete-two-factor.ts'
import { login } from '../../flows/sign-in/login.ts'
import { revokeSession } from '../../commands/session/revoke-session.ts'
import type { SignedIn } from '../../commands/session/start-session.ts'
import { issuersOf } from '../../commands/context.ts'
import { DomainError } from '../../domain/shared.ts'
import { hmacHex } from '../../lib/crypto/hashing.ts'
import { randomBytes } from 'node:crypto'
import { signInThrottleOf } from '../plugins/throttle.ts'
import { HttpProblem } from '../problem.ts'
import { verifyAccessToken, verifyAuthorizationRequest, type AuthorizationRequest } from '../../lib/crypto/jwt.ts'
import { getSession } from '../../projections/sessions.ts'
import { getUserDoc } from '../../projections/users.ts'
import { problems } from '../schemas.ts'
import type { HttpRuntime } from '../runtime.ts'
import { secureCookie } from '../cookies.ts'

type Locale = 'en' | 'fr'

const TEXT: Record<Locale, Record<string, string>> = {
  en: {
    service: 'Email verification',
    signup: 'No account yet? Create one',
    forgot: 'Forgot your password?',
    newTab: '(opens in a new tab)',
    title: 'Authorize an application',
    error: 'This authorization request cannot go on',
    signin: 'Sign in to continue',
    email: 'Email',
    password: 'Password',
    next: 'Sign in',
    twofa: 'Enter the code from your authenticator app, or a backup code',
    code: 'Code',
    verify: 'Verify',
    wants: 'wants to act for your account',
    as: 'Signed in as',
    asks: 'It asks to:',
    approve: 'Allow',
    deny: 'Deny',
    redirect: 'You will be sent back to',
    wrong: 'Wrong email or password.',
    wrongCode: 'Wrong code.',
    locked: 'Too many attempts: the account is locked for a while.',
    expired: 'This page has expired: start again from the application.',
    unconfirmed: 'Confirm your address first.',
    'email:verify:single': 'Verify addresses one at a time (uses your tokens)',
    'email:verify:bulk': 'Verify lists of addresses (uses your tokens)',
    'results:read': 'Read your verification results',
    'usage:read': 'Read your usage statistics',
    'billing:read': 'Read your wallet and subscription'
  },
  fr: {
    service: 'V\u00e9rification d\u2019e-mails',
    signup: 'Pas encore de compte ? Cr\u00e9ez-en un',
    forgot: 'Mot de passe oubli\u00e9 ?',
    newTab: '(s\u2019ouvre dans un nouvel onglet)',
    title: 'Autoriser une application',
    error: 'Cette demande d\u2019autorisation ne peut pas aboutir',
    signin: 'Connectez-vous pour continuer',
    email: 'Adresse e-mail',
    password: 'Mot de passe',
    next: 'Se connecter',
    twofa: 'Saisissez le code de votre application d\u2019authentification, ou un code de secours',
    code: 'Code',
    verify: 'Valider',
    wants: 'souhaite agir pour votre compte',
    as: 'Connect\u00e9 en tant que',
    asks: 'Elle demande \u00e0 :',
    approve: 'Autoriser',
    deny: 'Refuser',
    redirect: 'Vous serez renvoy\u00e9 vers',
    wrong: 'Adresse ou mot de passe incorrect.',
    wrongCode: 'Code incorrect.',
    locked: 'Trop d\u2019essais : le compte est bloqu\u00e9 pour un moment.',
    expired: 'Cette page a expir\u00e9 : recommencez depuis l\u2019application.',
    unconfirmed: 'Confirmez d\u2019abord votre adresse.',
    'email:verify:single': 'V\u00e9rifier des adresses une \u00e0 une (utilise vos jetons)',
    'email:verify:bulk': 'V\u00e9rifier des listes d\u2019adresses (utilise vos jetons)',
    'results:read': 'Lire vos r\u00e9sultats de v\u00e9rification',
    'usage:read': 'Lire vos statistiques d\u2019utilisation',
    'billing:read': 'Lire votre portefeuille et votre abonnement'
  }
}

const esc = (s: string): string => s.replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

/** The locale of a page: the account's once signed in, else the browser's `Accept-Language` (en or fr). */
function localeOf(request: FastifyRequest, account?: string | null): Locale {
  if (account === 'fr' || account === 'en') return account
  return /^\s*fr\b/i.test(request.headers['accept-language'] ?? '') ? 'fr' : 'en'
}

/**
 * Where a redirect URI leads, as the page shows it and as CSP's `form-action` allows it:
 * its origin for http(s), its scheme (and host) for a native app's private-use scheme.
 */
function redirectTarget(uri: string): { shown: string; source: string } {
  const u = new URL(uri)
  if (u.protocol === 'https:' || u.protocol === 'http:') return { shown: u.origin, source: u.origin }
  return { shown: `${u.protocol}//${u.host}`, source: u.protocol }
}

export interface PageData {
  message?: string
  /** The sign-in forms' CSRF token (bound to the browser's pre-sign-in cookie and the request). */
  pre?: string
  req?: string
  request?: AuthorizationRequest
  client_name?: string
  email?: string
  temp_token?: string
  csrf?: string
  locale?: string | null
}

/**
 * A server-rendered page of the authorization flow (no JavaScript): an error, the
 * sign-in form, the second-factor form, or the consent form. Framing is refused, and
 * forms may post only here (and the consent's redirect may go only to the client).
 */
export function page(reply: FastifyReply, request: FastifyRequest, kind: 'error' | 'signin' | '2fa' | 'consent', d: PageData): FastifyReply {
  const t = TEXT[localeOf(request, d.locale)]
  const hidden = (name: string, value: string | undefined): string => (value === undefined ? '' : `<input type="hidden" name="${name}" value="${esc(value)}">`)
  const msg = d.message ? `<p class="alert error" role="alert">${esc(d.message)}</p>` : ''
  const field = (label: string, input: string): string =>
    `<div class="field"><label for="f-${input.match(/name="(\w+)"/)![1]}">${esc(label)}</label>${input.replace('<input ', `<input id="f-${input.match(/name="(\w+)"/)![1]}" `)}</div>`
  // The console's pages open beside the authorization (a new tab): the flow stays where it is.
  const away = (href: string, text: string): string =>
    `<a href="${href}" target="_blank" rel="noopener">${esc(text)}<span class="visually-hidden"> ${esc(t.newTab)}</span></a>`
  let body: string
  if (kind === 'error') body = `<h1>${esc(t.error)}</h1><div class="card">${msg}</div>`
  else if (kind === 'signin') {
    body = `<h1>${esc(t.title)}</h1><div class="card"><p><strong>${esc(d.client_name ?? '')}</strong> ${esc(t.wants)}.</p><h2>${esc(t.signin)}</h2>${msg}
<form method="post" action="/oauth/consent">${hidden('req', d.req)}${hidden('pre', d.pre)}${hidden('action', 'signin')}
${field(t.email, '<input type="email" name="email" autocomplete="username" required>')}
${field(t.password, '<input type="password" name="password" autocomplete="current-password" required>')}
<button class="button" type="submit" name="go" value="signin">${esc(t.next)}</button></form>
<p>${away('/forgot', t.forgot)}</p><p>${away('/signup', t.signup)}</p></div>`
  } else if (kind === '2fa') {
    body = `<h1>${esc(t.title)}</h1><div class="card"><p>${esc(t.twofa)}</p>${msg}
<form method="post" action="/oauth/consent">${hidden('req', d.req)}${hidden('pre', d.pre)}${hidden('action', '2fa')}${hidden('temp_token', d.temp_token)}
${field(t.code, '<input type="text" name="code" autocomplete="one-time-code" inputmode="numeric" required>')}
<button class="button" type="submit" name="go" value="2fa">${esc(t.verify)}</button></form></div>`
  } else {
    const r = d.request!
    const scopes = r.scopes.map(s => `<li>${esc(t[s] ?? s)} <code>${esc(s)}</code></li>`).join('')
    body = `<h1>${esc(t.title)}</h1><div class="card"><p><strong>${esc(d.client_name ?? '')}</strong> ${esc(t.wants)}.</p><p>${esc(t.as)} <strong>${esc(d.email ?? '')}</strong></p>
<p>${esc(t.asks)}</p><ul>${scopes}</ul><p>${esc(t.redirect)} <code>${esc(redirectTarget(r.redirect_uri).shown)}</code></p>
<form method="post" action="/oauth/consent">${hidden('req', d.req)}${hidden('csrf', d.csrf)}
<div class="row"><button class="button" type="submit" name="action" value="approve">${esc(t.approve)}</button> <button class="button secondary" type="submit" name="action" value="deny">${esc(t.deny)}</button></div></form></div>`
  }
  const formTargets = d.request ? ` ${redirectTarget(d.request.redirect_uri).source}` : ''
  // The console's look (its style sheet, /theme.css, shared), no inline style or script.
  reply
    .header(
      'content-security-policy',
      `default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'${formTargets}; frame-ancestors 'none'; base-uri 'none'`
    )
    .header('x-frame-options', 'DENY')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .type('text/html; charset=utf-8')
  const lang = localeOf(request, d.locale)
  return reply.send(`<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(t.title)} — ${esc(t.service)}</title>
<link rel="stylesheet" href="/theme.css"><link rel="icon" href="/favicon.svg" type="image/svg+xml"></head><body><main class="center-page"><p class="brand">${esc(t.service)}</p>${body}</main></body></html>`)
}

/** The sign-in of the consent page: the session's access token, HttpOnly, SameSite=Strict, under /oauth, 15 minutes. */
function setConsentCookie(request: FastifyRequest, reply: FastifyReply, s: SignedIn): void {
  reply.setCookie('svc_consent', s.access_token, { httpOnly: true, sameSite: 'strict', secure: secureCookie(request), path: '/oauth', maxAge: s.expires_in })
}

/** The consent page's signed-in account: its session (unrevoked) and user, or null. */
async function signedIn(rt: HttpRuntime, request: FastifyRequest): Promise<{ user_uuid: string; session_uuid: string } | null> {
  const token = request.cookies.svc_consent
  const claims = token ? await verifyAccessToken(rt.ctx.secrets, issuersOf(rt.ctx), token) : null
  if (!claims || claims.grant) return null
  const session = await getSession(rt.ctx, claims.session_uuid)
  return session && session.revoked_at === null ? { user_uuid: claims.user_uuid, session_uuid: claims.session_uuid } : null
}

/** The CSRF token of a consent form: bound to the sign-in session and to the signed request (ASVS 5.0 V3.5). */
const csrfOf = (rt: HttpRuntime, sessionUuid: string, requestId: string): string =>
  hmacHex(rt.ctx.secrets.code_key, `consent:${sessionUuid}:${requestId}`).slice(0, 43)

/** The sign-in's lifetime on the consent page (s): it serves this authorization only, and is ended by the decision. */
const CONSENT_SESSION_S = 900

/**
 * The sign-in forms' CSRF token (login CSRF: a page elsewhere must not sign the browser
 * in as someone else): an HMAC of the browser's pre-sign-in cookie `svc_consent_pre`
 * (HttpOnly, SameSite=Strict, so a cross-site post does not carry it) and the request.
 */
const preOf = (rt: HttpRuntime, cookie: string, requestId: string): string =>
  hmacHex(rt.ctx.secrets.code_key, `consent-pre:${cookie}:${requestId}`).slice(0, 43)

/** The browser's pre-sign-in cookie, set when absent (random, 10 minutes, under /oauth). */
function preCookie(request: FastifyRequest, reply: FastifyReply): string {
  const existing = request.cookies.svc_consent_pre
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing
  const value = randomBytes(32).toString('base64url')
  reply.setCookie('svc_consent_pre', value, { httpOnly: true, sameSite: 'strict', secure: secureCookie(request), path: '/oauth', maxAge: 600 })
  return value
}

const Html = { description: 'A page of the authorization flow', content: { 'text/html': { schema: z.string() } } }

/** GET and POST /oauth/consent: sign in (with the second factor when on), then approve or deny. */
export function consentRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const tags = ['OAuth']

  const consentPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    req: string,
    r: AuthorizationRequest,
    id: string,
    who: { user_uuid: string; session_uuid: string }
  ): Promise<FastifyReply> => {
    const [client, user] = await Promise.all([clientById(rt.ctx, r.client_id), getUserDoc(rt.ctx, who.user_uuid)])
    const email = user ? await rt.ctx.sealer.unseal(who.user_uuid, user.email) : null
    return page(reply.code(200), request, 'consent', {
      req,
      request: r,
      client_name: client?.client_name,
      email: email ?? '',
      csrf: csrfOf(rt, who.session_uuid, id),
      locale: user?.locale
    })
  }

  app.route({
    method: 'GET',
    url: '/oauth/consent',
    config: { auth: 'none' },
    schema: {
      operationId: 'oauthConsentPage',
      summary: 'The consent page: sign in, then approve or deny (HTML, no JavaScript)',
      tags,
      querystring: z.object({ req: z.string().max(8_192).optional() }),
      response: { 200: Html, 400: Html, ...problems() }
    },
    handler: async (request, reply) => {
      const parsed = request.query.req ? await verifyAuthorizationRequest(rt.ctx.secrets, rt.ctx.config.jwt_issuer, request.query.req) : null
      if (!parsed) return page(reply.code(400), request, 'error', { message: TEXT[localeOf(request)].expired })
      const who = await signedIn(rt, request)
      if (who) return await consentPage(request, reply, request.query.req!, parsed.request, parsed.id, who)
      const client = await clientById(rt.ctx, parsed.request.client_id)
      return page(reply.code(200), request, 'signin', {
        req: request.query.req,
        client_name: client?.client_name,
        pre: preOf(rt, preCookie(request, reply), parsed.id)
      })
    }
  })

  app.route({
    method: 'POST',
    url: '/oauth/consent',
    config: { auth: 'none', invalid: 'consent.invalid_request' },
    schema: {
      operationId: 'oauthConsent',
      summary:
        "The consent page's forms: sign-in, second factor, approve or deny (approve → 302 to the client with a code; deny → 302 with error=access_denied)",
      tags,
      body: z.object({
        req: z.string().max(8_192),
        action: z.enum(['signin', '2fa', 'approve', 'deny']),
        email: z.string().max(320).optional(),
        password: z.string().max(4_096).optional(),
        temp_token: z.string().max(2_048).optional(),
        code: z.string().max(64).optional(),
        csrf: z.string().max(64).optional(),
        pre: z.string().max(64).optional(),
        go: z.string().max(16).optional()
      }),
      response: { 200: Html, 302: z.null().meta({ description: 'Back to the client' }), 400: Html, 401: Html, 403: Html, 429: Html, ...problems(413, 415) }
    },
    handler: async (request, reply) => {
      const b = request.body
      const parsed = await verifyAuthorizationRequest(rt.ctx.secrets, rt.ctx.config.jwt_issuer, b.req)
      const t = TEXT[localeOf(request)]
      if (!parsed) return page(reply.code(400), request, 'error', { message: t.expired })
      const client = await clientById(rt.ctx, parsed.request.client_id)
      const seen = { user_agent: request.headers['user-agent'] ?? null, ip: request.ip }
      if (b.action === 'signin' || b.action === '2fa') {
        const preCookieValue = request.cookies.svc_consent_pre ?? ''
        const pre = preOf(rt, preCookieValue, parsed.id)
        if (preCookieValue === '' || b.pre !== pre) return page(reply.code(403), request, 'error', { message: t.expired })
        const refused = (err: unknown, kind: 'signin' | '2fa'): FastifyReply => {
          if (!(err instanceof DomainError)) throw err
          const status = err.kind === 'locked' ? 429 : err.kind === 'forbidden' ? 403 : 401
          const message = err.kind === 'locked' ? t.locked : err.kind === 'forbidden' ? t.unconfirmed : kind === '2fa' ? t.wrongCode : t.wrong
          return page(reply.code(status), request, kind, { req: b.req, client_name: client?.client_name, temp_token: b.temp_token, message, pre })
        }
        // The same per-client sign-in throttle as /api/auth/login (counted before it is judged).
        const throttle = signInThrottleOf(rt)
        let s: Awaited<ReturnType<typeof login>>
        try {
          if (b.action === 'signin') throttle.attempt(request.ip)
          s =
            b.action === 'signin'
              ? await login(rt.ctx, { email: b.email ?? '', password: b.password ?? '' }, seen, CONSENT_SESSION_S)
              : await completeTwoFactor(rt.ctx, b.temp_token ?? '', b.code ?? '', seen, CONSENT_SESSION_S)
          if (b.action === 'signin') throttle.succeeded(request.ip)
        } catch (err) {
          if (err instanceof HttpProblem && err.status === 429)
            return page(reply.code(429), request, 'signin', { req: b.req, client_name: client?.client_name, message: t.locked, pre })
          if (b.action === 'signin' && !(err instanceof DomainError && err.kind === 'unauthorized')) throttle.succeeded(request.ip)
          return refused(err, b.action)
        }
        if ('two_factor_required' in s) return page(reply.code(200), request, '2fa', { req: b.req, temp_token: s.temp_token, pre })
        await rt.caughtUp(request, s.position)
        setConsentCookie(request, reply, s)
        return await consentPage(request, reply, b.req, parsed.request, parsed.id, { user_uuid: s.user_uuid, session_uuid: s.session_uuid })
      }
      // Approve or deny: the signed-in account of this page, and the form this page gave it.
      const who = await signedIn(rt, request)
      if (!who || b.csrf !== csrfOf(rt, who.session_uuid, parsed.id)) return page(reply.code(403), request, 'error', { message: t.expired })
      const r = parsed.request
      const to = new URL(r.redirect_uri)
      if (b.action === 'approve') to.searchParams.set('code', await issueCode(rt.ctx, who.user_uuid, r))
      else to.searchParams.set('error', 'access_denied')
      if (r.state !== null) to.searchParams.set('state', r.state)
      to.searchParams.set('iss', rt.ctx.base_url())
      // The page's sign-in ends with the decision (it was only for this authorization).
      await revokeSession(rt.ctx, who.session_uuid, 'logout').catch(err => {
        if (!(err instanceof DomainError)) throw err
      })
      reply.clearCookie('svc_consent', { path: '/oauth' })
      return reply.redirect(to.toString(), 302)
    }
  })
}
