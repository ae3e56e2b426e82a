import type { FastifyRequest } from 'fastify'
import type { BlobStore } from '../ports/blob-store.ts'
import type { CommandContext } from '../commands/context.ts'
import type { Metrics } from '../ports/metrics.ts'
import type { RateCounter } from '../ports/rate-limit.ts'
import type { Billing } from '../ports/billing.ts'
import type { WebhookSender } from '../ports/webhook-sender.ts'
import type { CompletionWaits } from './waits.ts'
import type { ListFileWork } from '../lists/file-work.ts'

/**
 * Why a part of the process is not ready: which part, a problem code, and what was seen
 * (no secret in it, but operators' infrastructure: `/readyz` gives `detail` only to a
 * bearer of the metrics token).
 */
export interface NotReady {
  /** `postgresql`, `projections`, `relay`, `egress`, … */
  component: string
  /** `unreachable` (a store), `starting`, `catching_up`, `resubscribing`, `dns_failing`, `port_25_blocked`, `proxy_failing`. */
  problem: string
  detail: string | null
}

/** `/readyz`'s answer: ready, or the reasons it is not (`starting` while a part has not caught up once, `degraded` after). */
export interface Readiness {
  status: 'ready' | 'starting' | 'degraded'
  reasons: NotReady[]
}

/** What routes need: the command context and read-your-writes. */
export interface HttpRuntime {
  ctx: CommandContext
  /**
   * Resolves once the read models have applied events up to `position` (read your writes),
   * or false after its bound (5 s): the answer then goes out as the read models stand,
   * marked `Read-Your-Writes: timeout` on `request`'s response (null: no HTTP answer to
   * mark, as an MCP tool's) and counted in `read_your_writes_timeouts_total`.
   */
  caughtUp: (request: FastifyRequest | null, position: number) => Promise<boolean>
  /** Whether the service is ready (read models caught up, the relay subscribed, egress working), and if not, why. */
  ready: () => Readiness
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
  /** The threads that read and merge kept files, off the event loop. */
  list_files: ListFileWork
  /** Sends a webhook test delivery (`POST /api/webhooks/{uuid}/test`): the adapter of the webhook worker. */
  send_webhook: WebhookSender
}
