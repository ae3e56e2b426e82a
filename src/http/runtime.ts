import type { CommandContext } from '../commands/context.ts'
import type { ServiceMetrics } from '../infra/metrics.ts'

/** What routes need: the command context and read-your-writes. */
export interface HttpRuntime {
  ctx: CommandContext
  /** Resolves once the read models have applied events up to `position` (bounded wait). */
  caughtUp: (position: number) => Promise<boolean>
  /** Whether the service is ready (read models caught up, workers running). */
  ready: () => boolean
  /** This process's metrics. */
  metrics: ServiceMetrics
}
