import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomBytes } from 'node:crypto'

/** A request the Stripe SDK made: its path, form parameters (flat, as `a[b][0]` keys) and credential. */
interface StripeCall {
  method: string
  path: string
  params: Record<string, string>
  authorization: string | undefined
}

export interface FakeStripe {
  /** `STRIPE_API_URL` for the service. */
  url: string
  calls: StripeCall[]
  /** While true, every call answers 500 with Stripe's error shape (Stripe is down). */
  failing: boolean
  close: () => Promise<void>
}

const id = (prefix: string): string => `${prefix}_test_${randomBytes(12).toString('hex')}`

/** Stripe's error body (https://docs.stripe.com/api/errors). */
function error(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ error: { type, message } }))
}

/** The nested object of flat `a[b][c]` parameters (metadata read back as Stripe would keep it). */
function nested(params: Record<string, string>, prefix: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(params)) {
    const m = new RegExp(`^${prefix.replace(/[[\]]/g, '\\$&')}\\[([^\\]]+)\\]$`).exec(k)
    if (m) out[m[1]] = v
  }
  return out
}

/**
 * A local HTTP server answering the two Stripe API calls the service makes, with the
 * response shapes Stripe documents: `POST /v1/checkout/sessions` (a Checkout Session,
 * https://docs.stripe.com/api/checkout/sessions/object) and `POST /v1/billing_portal/sessions`
 * (a portal session, https://docs.stripe.com/api/customer_portal/sessions/object). Anything
 * else is a 404 `invalid_request_error`, as Stripe answers an unknown path.
 */
export async function startFakeStripe(): Promise<FakeStripe> {
  const calls: StripeCall[] = []
  const state = { failing: false }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = ''
    req.on('data', c => {
      body += c
    })
    req.on('end', () => {
      const params = Object.fromEntries(new URLSearchParams(body))
      const path = (req.url ?? '').split('?')[0]
      calls.push({ method: req.method ?? '', path, params, authorization: req.headers.authorization })
      if (state.failing) return error(res, 500, 'api_error', 'An unknown error occurred')
      if (!/^Bearer sk_test_/.test(req.headers.authorization ?? '')) return error(res, 401, 'invalid_request_error', 'Invalid API Key provided')
      const created = Math.floor(Date.now() / 1000)
      res.setHeader('content-type', 'application/json')
      res.setHeader('request-id', id('req'))
      if (req.method === 'POST' && path === '/v1/checkout/sessions') {
        const session = id('cs')
        return res.end(
          JSON.stringify({
            id: session,
            object: 'checkout.session',
            mode: params.mode,
            status: 'open',
            payment_status: 'unpaid',
            url: `https://checkout.stripe.com/c/pay/${session}`,
            customer: params.customer ?? null,
            client_reference_id: params.client_reference_id ?? null,
            metadata: nested(params, 'metadata'),
            locale: params.locale ?? null,
            success_url: params.success_url,
            cancel_url: params.cancel_url,
            subscription: null,
            created,
            expires_at: created + 86_400,
            livemode: false
          })
        )
      }
      if (req.method === 'POST' && path === '/v1/billing_portal/sessions') {
        const session = id('bps')
        return res.end(
          JSON.stringify({
            id: session,
            object: 'billing_portal.session',
            customer: params.customer,
            return_url: params.return_url,
            locale: params.locale ?? null,
            url: `https://billing.stripe.com/p/session/${session}`,
            created,
            livemode: false
          })
        )
      }
      error(res, 404, 'invalid_request_error', `Unrecognized request URL (${req.method}: ${path})`)
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    get failing() {
      return state.failing
    },
    set failing(v: boolean) {
      state.failing = v
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
    }
  }
}
