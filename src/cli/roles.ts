import type { Command } from 'commander'
import type { Role } from '../main.ts'
import { loadConfig, usage } from './common.ts'

/**
 * Runs a role until SIGTERM/SIGINT, then stops it gracefully (in-flight work finishes).
 * Whatever the process creates is its user's alone (umask 077): the stores make their files
 * 0600 themselves, and this holds for anything a library creates beside them.
 */
async function runRole(role: Role): Promise<void> {
  process.umask(0o077)
  const { startRole } = await import('../main.ts')
  const service = await startRole(role, await loadConfig())
  let stopping = false
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return
    stopping = true
    console.error(JSON.stringify({ level: 30, role, msg: `${signal}: shutting down` }))
    try {
      await service.close()
    } catch (err) {
      console.error(JSON.stringify({ level: 50, role, msg: 'shutdown incomplete', err: String(err) }))
      process.exit(1)
    }
    process.exit(0)
  }
  process.on('SIGINT', () => {
    void stop('SIGINT')
  })
  process.on('SIGTERM', () => {
    void stop('SIGTERM')
  })
}

/** The roles that take no argument, and what `svc --help` says of each. */
const ROLES: ReadonlyArray<readonly ['serve' | 'api' | 'projector' | 'relay', string]> = [
  ['serve', 'run everything in one process (API, projections, relay, workers): what npm start runs'],
  ['api', 'run the HTTP API with its read models (projections) only'],
  ['projector', 'run the projections into the read store, from their checkpoints (one process projects at a time)'],
  ['relay', 'run the relay: committed events to the bus (NATS_URL), from its checkpoint']
]

/** `svc serve | api | projector | relay | worker <service>`: the service's roles, each until SIGTERM. */
export function registerRoles(program: Command): void {
  for (const [role, description] of ROLES) {
    program
      .command(role)
      .description(description)
      .action(async () => {
        await runRole(role)
      })
  }

  program
    .command('worker')
    .description('run one worker service that consumes the bus')
    .argument('<service>', 'verifier | webhooks | mailer')
    .action(async (service: string) => {
      if (service !== 'verifier' && service !== 'webhooks' && service !== 'mailer') usage(`unknown worker "${service}"; one of: verifier, webhooks, mailer`)
      await runRole(`worker:${service}`)
    })
}
