import { InvalidArgumentError } from 'commander'
import { userInfo } from 'node:os'
import { SingleBar, Presets } from 'cli-progress'
import { DomainError } from '../domain/shared.ts'

// The commands load what they use when they run (dynamic imports): `svc verify-file`, a
// client of the public API, never loads the service, and `svc --help` stays quick.
export const loadConfig = async (): Promise<import('../config.ts').Config> => (await import('../config.ts')).loadConfig()
export type Core = import('../core.ts').Core

/** commander's parser of a positive whole number. @throws InvalidArgumentError (a usage error, exit 2). */
export const positiveInt = (v: string): number => {
  const n = Number(v)
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number')
  return n
}

/** Who runs an operator command (SVC_OPERATOR, else the OS user): the actor of what it appends. */
export const operator = (): string => process.env.SVC_OPERATOR ?? userInfo().username

/** A usage error: said on stderr, exit 2. */
export function usage(message: string): never {
  console.error(`error: ${message}`)
  process.exit(2)
}

/**
 * Runs an operator command against the configured stores (it works while the service
 * runs): prints its JSON result, or `error: <message> (<code>)` and exit code 1.
 */
export async function operatorCommand(fn: (core: Core) => Promise<unknown>): Promise<void> {
  const { openCore } = await import('../core.ts')
  const core = await openCore(await loadConfig())
  try {
    console.log(JSON.stringify(await fn(core)))
  } catch (err) {
    if (!(err instanceof DomainError)) throw err
    console.error(`error: ${err.message} (${err.code})`)
    process.exitCode = 1
  } finally {
    await core.close()
  }
}

/**
 * The read models as this store holds them, brought up to date first (or followed, when
 * another process projects): what an operator's read sees. Cost: the events since the
 * projections' checkpoints.
 */
export async function catchUpReadModels(core: Core): Promise<void> {
  const [{ PROJECTIONS }, { ProjectionRunner }] = await Promise.all([import('../projections/index.ts'), import('../eventsourcing/projection-runner.ts')])
  const runner = new ProjectionRunner(core.store, PROJECTIONS, core.ctx.reads)
  await runner.start()
  await runner.stop()
}

/** A progress bar on stderr (when it is a terminal, or with SVC_PROGRESS=1), with the rate in events per second. */
export function progressBar(
  label: string,
  unit = 'events',
  open = false,
  resumable = false
): { update: (position: number, end: number) => void; stop: () => void } {
  // `open`: no end known yet (a count and a rate). Rate and ETA count this run's progress
  // only: a resumed run (`resumable`) starts from where the last one stopped.
  const format = open
    ? `${label} | {value} ${unit} | {rate} ${unit}/s`
    : `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {rate} ${unit}/s | ETA {eta_text}`
  const bar = new SingleBar(
    { format, stream: process.stderr, noTTYOutput: process.env.SVC_PROGRESS === '1', notTTYSchedule: 500, hideCursor: true },
    Presets.shades_classic
  )
  const t0 = Date.now()
  let first = 0
  let started = false
  const payload = (position: number, end: number): { rate: number; eta_text: string } => {
    const perMs = (position - first) / Math.max(1, Date.now() - t0)
    const left = end - position
    const eta = left <= 0 ? '0s' : perMs <= 0 ? '…' : `${Math.ceil(left / perMs / 1000)}s`
    return { rate: Math.round(perMs * 1000), eta_text: eta }
  }
  return {
    update: (position, end) => {
      if (!started) {
        first = resumable ? position : 0
        bar.start(end, position, payload(position, end))
        started = true
        return
      }
      bar.setTotal(end)
      bar.update(position, payload(position, end))
    },
    stop: () => {
      if (started) bar.stop()
      started = false
    }
  }
}
