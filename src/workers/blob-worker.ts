import type { Bus, Consumer } from '../ports/bus.ts'
import type { RecordedEvent } from '../ports/event-store.ts'
import type { BlobStore } from '../ports/blob-store.ts'
import type { BatchSourceRemoved } from '../domain/batch-source/events.ts'
import { removeBatchSource } from '../commands/batch-source/remove-batch-source.ts'
import { expiredSources } from '../projections/batches.ts'
import type { CommandContext } from '../commands/context.ts'

/** What the blob worker consumes: a kept file removed, an account erased. */
export const BLOB_EVENTS = ['BatchSourceRemoved', 'UserDeleted'] as const

export interface BlobWorkerOptions {
  /** How often the retention sweep runs (ms). */
  sweep_ms: number
  /** Whether this process sweeps (the sweep needs the read models: a process that projects or reads them). */
  sweep: boolean
  log: (msg: string, err?: unknown) => void
}

/**
 * The blob worker: the bytes of customers' kept
 * files follow the events. BatchSourceRemoved → the blob deleted; UserDeleted → every blob
 * of the account deleted (the account's key is destroyed too: what a lagging copy kept
 * cannot be opened). With `sweep`, kept files whose retention ended are removed every
 * `sweep_ms` (RemoveBatchSource `expired`: an event, then the deletion through this same
 * consumer). Idempotent: deleting twice deletes nothing more.
 */
export async function startBlobWorker(ctx: CommandContext, bus: Bus, blobs: BlobStore, options: BlobWorkerOptions): Promise<Consumer> {
  const consumer = await bus.consume({ name: 'blobs', event_types: BLOB_EVENTS, concurrency: 4, max_deliveries: 8 }, async (event: RecordedEvent) => {
    if (event.type === 'UserDeleted') {
      await blobs.deleteOwner(event.data.user_uuid as string)
      return
    }
    const d = event.data as BatchSourceRemoved['data']
    await blobs.delete(d.user_uuid, d.blob_id)
  })
  let timer: NodeJS.Timeout | null = null
  let sweeping: Promise<void> | null = null
  const sweep = async (): Promise<void> => {
    for (const s of await expiredSources(ctx, ctx.now().toISOString(), 100)) await removeBatchSource(ctx, s.batch_uuid, s.blob_id, 'expired')
  }
  if (options.sweep) {
    timer = setInterval(() => {
      sweeping ??= sweep()
        .catch(err => {
          options.log('blob retention sweep failed', err)
        })
        .finally(() => {
          sweeping = null
        })
    }, options.sweep_ms)
    timer.unref()
  }
  return {
    get problem() {
      return consumer.problem ?? null
    },
    stop: async () => {
      if (timer) clearInterval(timer)
      await sweeping
      await consumer.stop()
    }
  }
}
