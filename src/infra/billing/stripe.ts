import type Stripe from 'stripe'
import { BillingUnavailableError, InvalidWebhookError, type Billing, type CheckoutRequest } from '../../ports/billing.ts'

/**
 * Stripe through its official SDK: Checkout Sessions (subscription mode for a plan,
 * payment mode for a top-up pack), the customer portal, and webhook signatures
 * (`stripe.webhooks.constructEvent`, HMAC-SHA256 over `t.payload` with a tolerance of
 * 300 s). `api_url` points the SDK at another server (its `host`, `port` and `protocol`).
 * Requests time out after 10 s and are retried once by the SDK.
 */
export class StripeBilling implements Billing {
  private readonly stripe: Stripe
  private readonly webhookSecret: string | null

  /** Loads the SDK (only where billing is configured: it weighs about 18 MiB) and connects it. */
  static async create(options: { secret_key: string; webhook_secret: string | null; api_url: string | null }): Promise<StripeBilling> {
    const { default: Sdk } = await import('stripe')
    return new StripeBilling(Sdk, options)
  }

  private constructor(Sdk: typeof Stripe, options: { secret_key: string; webhook_secret: string | null; api_url: string | null }) {
    const url = options.api_url ? new URL(options.api_url) : null
    this.stripe = new Sdk(options.secret_key, {
      maxNetworkRetries: 1,
      timeout: 10_000,
      ...(url && {
        host: url.hostname,
        port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
        protocol: url.protocol === 'https:' ? 'https' : 'http'
      })
    })
    this.webhookSecret = options.webhook_secret
  }

  async checkout(r: CheckoutRequest): Promise<{ id: string; url: string }> {
    try {
      const session = await this.stripe.checkout.sessions.create({
        mode: r.mode,
        line_items: [{ price: r.price, quantity: r.quantity }],
        ...(r.customer ? { customer: r.customer } : r.mode === 'payment' ? { customer_creation: 'always' as const } : {}),
        client_reference_id: r.user_uuid,
        metadata: r.metadata,
        ...(r.mode === 'subscription' && { subscription_data: { metadata: r.metadata } }),
        locale: r.locale as never,
        success_url: r.success_url,
        cancel_url: r.cancel_url
      })
      if (!session.url) throw new BillingUnavailableError('Stripe answered a checkout session without a URL')
      return { id: session.id, url: session.url }
    } catch (err) {
      if (err instanceof BillingUnavailableError) throw err
      throw new BillingUnavailableError(`Stripe checkout failed: ${(err as Error).message}`)
    }
  }

  async portal(r: { customer: string; return_url: string; locale: string }): Promise<{ url: string }> {
    try {
      const session = await this.stripe.billingPortal.sessions.create({ customer: r.customer, return_url: r.return_url, locale: r.locale as never })
      return { url: session.url }
    } catch (err) {
      throw new BillingUnavailableError(`Stripe portal failed: ${(err as Error).message}`)
    }
  }

  parseWebhook(rawBody: Buffer, signature: string | undefined): unknown {
    if (this.webhookSecret === null) throw new BillingUnavailableError('STRIPE_WEBHOOK_SECRET is not set')
    if (!signature) throw new InvalidWebhookError('missing Stripe-Signature header')
    try {
      return this.stripe.webhooks.constructEvent(rawBody, signature, this.webhookSecret) as unknown
    } catch (err) {
      throw new InvalidWebhookError(`Stripe signature did not verify: ${(err as Error).message}`)
    }
  }
}
