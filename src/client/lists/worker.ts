import { parentPort, workerData, Worker } from 'node:worker_threads'
import type { EstimateResult, VerifyFileOptions, VerifyFileResult } from './options.ts'

/**
 * `svc verify-file` runs its list in a worker thread whose heap is bounded (V8's resource
 * limits: a young generation of 16 MiB, an old one of 256 MiB): the process's memory stays
 * well under 300 MiB whatever the list's size, without flags on the command line (Node's
 * default young generation, sized by the machine's memory, would let garbage grow the heap
 * far past what a run holds). The thread reports progress and its result as messages;
 * Ctrl-C in the main thread is an abort message.
 */
export const RUN_LIMITS = { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 256 }

type Plain = Omit<VerifyFileOptions, 'onProgress' | 'signal'>
type Message =
  | { progress: [phase: 'read' | 'verify' | 'write', done: number, total: number | null] }
  | { result: VerifyFileResult | EstimateResult }
  | { error: { message: string; code: string | null; status: number | null; list: boolean } }

/**
 * Runs `verifyFile` in a bounded worker thread.
 * @throws ListError (call.ts) for what the run refused; Error for anything unexpected.
 */
export async function verifyFileInWorker(
  options: Plain,
  onProgress?: VerifyFileOptions['onProgress'],
  signal?: AbortSignal
): Promise<VerifyFileResult | EstimateResult> {
  const { ListError } = await import('./call.ts')
  const worker = new Worker(new URL(import.meta.url), { workerData: options, resourceLimits: RUN_LIMITS })
  const abort = (): void => {
    worker.postMessage('abort')
  }
  signal?.addEventListener('abort', abort, { once: true })
  try {
    return await new Promise((resolve, reject) => {
      worker.on('message', (m: Message) => {
        if ('progress' in m) onProgress?.(...m.progress)
        else if ('result' in m) resolve(m.result)
        else reject(m.error.list ? new ListError(m.error.message, m.error.code, m.error.status) : new Error(m.error.message))
      })
      worker.once('error', reject)
      worker.once('exit', code => {
        reject(new Error(`the run's thread stopped (exit ${code})`))
      })
    })
  } finally {
    signal?.removeEventListener('abort', abort)
    await worker.terminate()
  }
}

if (parentPort !== null && workerData !== null && typeof workerData === 'object' && 'input' in workerData) {
  const port = parentPort
  const [{ ListError }, { verifyFile }] = await Promise.all([import('./call.ts'), import('./run.ts')])
  const controller = new AbortController()
  port.on('message', (m: unknown) => {
    if (m === 'abort') controller.abort()
  })
  try {
    const result = await verifyFile({
      ...(workerData as Plain),
      signal: controller.signal,
      onProgress: (phase, done, total) => {
        port.postMessage({ progress: [phase, done, total] } satisfies Message)
      }
    })
    port.postMessage({ result } satisfies Message)
  } catch (err) {
    const e = err as Error & { code?: string | null; status?: number | null }
    port.postMessage({
      error: {
        message: err instanceof ListError ? e.message : String(e.stack ?? e),
        code: e.code ?? null,
        status: e.status ?? null,
        list: err instanceof ListError
      }
    } satisfies Message)
  }
  port.close()
}
