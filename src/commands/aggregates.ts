import type { EventMetadata } from '../ports/event-store.ts'
import type { Event } from '../domain/shared.ts'
import * as agent from '../domain/agent/decider.ts'
import * as apikey from '../domain/apikey/decider.ts'
import * as batch from '../domain/batch/decider.ts'
import * as batchSource from '../domain/batch-source/decider.ts'
import * as stripeEvent from '../domain/billing/decider.ts'
import * as job from '../domain/job/decider.ts'
import * as notification from '../domain/notification/decider.ts'
import * as oauth from '../domain/oauth/decider.ts'
import * as session from '../domain/session/decider.ts'
import * as subscription from '../domain/subscription/decider.ts'
import * as user from '../domain/user/decider.ts'
import * as wallet from '../domain/wallet/decider.ts'
import * as webhook from '../domain/webhook/decider.ts'
import * as delivery from '../domain/webhook/delivery.ts'
import { handle, load, type Decider, type HandleResult, type Loaded } from './command-handler.ts'
import type { CommandContext } from './context.ts'

/**
 * An aggregate's command handler, bound to its decider and to how its streams are named
 * (Emmett's `CommandHandler` per aggregate): `wallets.handle(ctx, user, command)` runs a
 * command on the stream `wallet-<user>` (command-handler.ts `handle`: its cost, retries and
 * errors), `wallets.load(ctx, user)` folds that stream.
 */
export interface Aggregate<S, E extends Event<string, unknown>, C> {
  /** `handle` on the stream of `id`. @throws as `handle`: DomainError from the decider, WrongExpectedRevisionError past the deadline. */
  handle(
    ctx: CommandContext,
    id: string,
    command: C | ((state: S) => C),
    meta?: Partial<EventMetadata>,
    options?: { known?: Loaded<S> }
  ): Promise<HandleResult<S, E>>
  /** The stream of `id` folded into state (revision -1: no such stream). */
  load(ctx: CommandContext, id: string): Promise<Loaded<S>>
}

function aggregate<S, E extends Event<string, unknown>, C>(category: string, decider: Decider<S, E, C>): Aggregate<S, E, C> {
  const stream = (id: string): string => `${category}-${id}`
  return {
    handle: (ctx, id, command, meta = {}, options = {}) => handle(ctx, stream(id), decider, command, meta, options),
    load: (ctx, id) => load(ctx, stream(id), decider)
  }
}

// The one place where each aggregate's streams are named. Streams keyed by a value that
// must stay unique across accounts (idempotency keys, e-mail claims) are named beside their
// commands, from a keyed hash of the value.

/** An account (`user-<user uuid>`). */
export const users = aggregate('user', user)
/** An account's tokens: grants, reservations, captures (`wallet-<user uuid>`). */
export const wallets = aggregate('wallet', wallet)
/** A signed-in session (`session-<session uuid>`). */
export const sessions = aggregate('session', session)
/** A single verification (`job-<job uuid>`). */
export const jobs = aggregate('job', job)
/** A list verification (`batch-<batch uuid>`). */
export const batches = aggregate('batch', batch)
/** A batch's uploaded file (`batch-source-<batch uuid>`). */
export const batchSources = aggregate('batch-source', batchSource)
/** An account's API keys (`apikeys-<user uuid>`). */
export const apiKeys = aggregate('apikeys', apikey)
/** An account's agents (`agents-<user uuid>`). */
export const agents = aggregate('agents', agent)
/** An account's webhook endpoints (`webhooks-<user uuid>`). */
export const webhooks = aggregate('webhooks', webhook)
/** One webhook delivery and its attempts (`webhook_delivery-<delivery uuid>`). */
export const webhookDeliveries = aggregate('webhook_delivery', delivery)
/** What an account has seen of its notification feed (`notifications-<user uuid>`). */
export const notifications = aggregate('notifications', notification)
/** An account's plan subscription (`subscription-<user uuid>`: every event carries it whole). */
export const subscriptions = aggregate('subscription', subscription)
/** A registered OAuth client (`oauth-client-<client id>`). */
export const oauthClients = aggregate('oauth-client', oauth.client)
/** An OAuth authorization code, by its SHA-256 (`oauth-code-<hash>`: the code itself is never stored). */
export const oauthCodes = aggregate('oauth-code', oauth.code)
/** A Stripe event handled once (`stripe_event-<Stripe event id>`: a redelivery finds it handled). */
export const stripeEvents = aggregate('stripe_event', stripeEvent)
