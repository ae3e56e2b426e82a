import type { BlobStore } from '../ports/blob-store.ts'
import type { CommandContext } from '../commands/context.ts'
import type { Metrics } from '../ports/metrics.ts'
import type { RateCounter } from '../ports/rate-limit.ts'
import type { Billing } from '../ports/billing.ts'
import type { WebhookSender } from '../ports/webhook-sender.ts'
import type { CompletionWaits } from './waits.ts'

/** What routes need: the command context and read-your-writes. */
export interface HttpRuntime {
  ctx: CommandContext
  /** Resolves once the read models have applied events up to `position` (bounded wait). */
  caughtUp: (position: number) => Promise<boolean>
  /** Whether the service is ready (read models caught up, workers running). */
  ready: () => boolean
  /** Rate counters of keys and agent tokens (shared across API processes in the production topology). */
  rate_counter: RateCounter
  /** Stripe, or null when `STRIPE_SECRET_KEY` is not set (billing operations answer 503). */
  billing: Billing | null
  /** This process's metrics. */
  metrics: Metrics
  /** Reads that wait for a job or a batch to end (`?wait=`); null where no read models are followed. */
  waits: CompletionWaits | null
  /** Where customers' kept files are (a list's original file, sealed). */
  blobs: BlobStore
  /** Sends a webhook test delivery (`POST /api/webhooks/{uuid}/test`): the adapter of the webhook worker. */
  send_webhook: WebhookSender
}
