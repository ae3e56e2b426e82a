#!/usr/bin/env node
import { Command, InvalidArgumentError } from 'commander'
import { userInfo } from 'node:os'
import { loadConfig } from './config.ts'
import { openCore, startRole, type Role } from './main.ts'
import { grantTokens } from './commands/grant-tokens.ts'
import { DomainError } from './domain/shared.ts'
import { banUser, unbanUser } from './commands/ban-user.ts'

const positiveInt = (v: string): number => {
  const n = Number(v)
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number')
  return n
}

const program = new Command()
program.name('svc').description('Email verification service').showHelpAfterError()

/** Runs a role until SIGTERM/SIGINT, then stops it gracefully (in-flight work finishes). */
async function runRole (role: Role, options: { rebuild?: boolean } = {}): Promise<void> {
  const service = await startRole(role, loadConfig(), options)
  let stopping = false
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return
    stopping = true
    console.error(JSON.stringify({ level: 30, role, msg: `${signal}: shutting down` }))
    await service.close()
    process.exit(0)
  }
  process.on('SIGINT', () => { void stop('SIGINT') })
  process.on('SIGTERM', () => { void stop('SIGTERM') })
}

program.command('serve')
  .description('run everything in one process (API, projections, relay, workers): what npm start runs')
  .action(async () => { await runRole('serve') })

program.command('api')
  .description('run the HTTP API with its read models (projections) only')
  .action(async () => { await runRole('api') })

program.command('projector')
  .description('run the projections into the durable read store (MONGODB_URL), from their checkpoints')
  .option('--rebuild', 'blue/green: project every event into a new version of the read models, switch to it when caught up')
  .action(async (opts: { rebuild?: boolean }) => { await runRole('projector', { rebuild: opts.rebuild === true }) })

program.command('relay')
  .description('run the relay: committed events to the bus (NATS_URL), from its checkpoint')
  .action(async () => { await runRole('relay') })

program.command('worker')
  .description('run one worker service that consumes the bus')
  .argument('<service>', 'verifier | webhooks | mailer')
  .action(async (service: string) => {
    if (service !== 'verifier' && service !== 'webhooks' && service !== 'mailer') {
      console.error(`unknown worker "${service}"; one of: verifier, webhooks, mailer`)
      process.exit(2)
    }
    await runRole(`worker:${service}`)
  })

const operator = (): string => process.env.SVC_OPERATOR ?? userInfo().username

/**
 * Runs an operator command against the configured stores (it works while the service
 * runs): prints its JSON result, or the domain error and exit code 1.
 */
async function operatorCommand (fn: (core: Awaited<ReturnType<typeof openCore>>) => Promise<unknown>): Promise<void> {
  const core = await openCore(loadConfig())
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

const accounts = program.command('accounts').description('operator commands on accounts')
for (const [name, type] of [['ban', 'BanUser'], ['unban', 'UnbanUser']] as const) {
  accounts.command(name)
    .description(name === 'ban' ? 'ban an account: sign-in and every credential answer 401' : 'lift a ban')
    .argument('<email>', 'account email')
    .option('--reason <text>', 'why (kept in the event for audit)', 'operator decision')
    .action(async (email: string, opts: { reason: string }) => {
      await operatorCommand(async core => type === 'BanUser' ? await banUser(core.ctx, email, opts.reason, operator()) : await unbanUser(core.ctx, email, operator()))
    })
}

const wallet = program.command('wallet').description('operator commands on wallets')
wallet.command('grant')
  .description('credit an account\'s wallet; appends an auditable TokensGranted event')
  .requiredOption('--email <address>', 'account email')
  .requiredOption('--tokens <n>', 'tokens to credit', positiveInt)
  .requiredOption('--reason <text>', 'why (kept in the event for audit)')
  .action(async (opts: { email: string, tokens: number, reason: string }) => {
    await operatorCommand(async core => {
      const r = await grantTokens(core.ctx, { email: opts.email, tokens: opts.tokens, reason: opts.reason, operator: operator() })
      return { granted: opts.tokens, user_uuid: r.user_uuid, grant_uuid: r.grant_uuid, balance: r.balance }
    })
  })

program.parseAsync().catch(err => {
  console.error(err instanceof Error ? err.message : err)
  process.exit(1)
})
