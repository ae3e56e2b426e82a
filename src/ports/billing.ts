/** Billing could not be reached or is not configured (interface: 503 "billing unavailable"). */
export class BillingUnavailableError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'BillingUnavailableError'
  }
}

/** A Stripe webhook whose signature or body does not verify (answered 400; nothing changes). */
export class InvalidWebhookError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'InvalidWebhookError'
  }
}

/** A Stripe event as delivered to the webhook endpoint: what we read of it is checked by the handler. */
export interface StripeEvent {
  id: string
  type: string
  created: number
  data: { object: Record<string, unknown> }
}

export interface CheckoutRequest {
  mode: 'subscription' | 'payment'
  price: string
  quantity: number
  /** The account's Stripe customer, when it has one; otherwise Stripe makes one. */
  customer: string | null
  user_uuid: string
  /** Kept on the session (and, for a subscription, on the subscription: webhooks read it back). */
  metadata: Record<string, string>
  locale: string
  success_url: string
  cancel_url: string
}

/** The billing provider as commands use it (the Stripe adapter; tests point it at a local server). */
export interface Billing {
  /** A hosted Checkout Session. @throws BillingUnavailableError when Stripe does not answer or refuses. */
  checkout(request: CheckoutRequest): Promise<{ id: string; url: string }>
  /** A hosted customer portal session. @throws BillingUnavailableError likewise. */
  portal(request: { customer: string; return_url: string; locale: string }): Promise<{ url: string }>
  /**
   * The parsed JSON body of a webhook delivery, its signature checked: any JSON value (`null`,
   * a number, an array…), which `billingWebhook` checks is a Stripe event object.
   * @throws InvalidWebhookError.
   */
  parseWebhook(rawBody: Buffer, signature: string | undefined): unknown
}

/** The configured billing provider. @throws BillingUnavailableError when `STRIPE_SECRET_KEY` is not set (the interface's 503). */
export function requireBilling(billing: Billing | null): Billing {
  if (billing === null) throw new BillingUnavailableError('billing is not configured on this service')
  return billing
}
