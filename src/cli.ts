#!/usr/bin/env node
import { Command, InvalidArgumentError } from 'commander'
import { userInfo } from 'node:os'
import { SingleBar, Presets } from 'cli-progress'
import { loadConfig } from './config.ts'
import { openCore, startRole, type Role } from './main.ts'
import { PROJECTIONS, projectionNamed } from './projections/index.ts'
import { ProjectionRunner } from './projections/runner.ts'
import { rebuildProjections } from './projections/rebuild.ts'
import { auditLedger } from './projections/ledger-audit.ts'
import { accountOfEmail } from './commands/email-index.ts'
import { grantTokens } from './commands/grant-tokens.ts'
import { DomainError } from './domain/shared.ts'
import { banUser, unbanUser } from './commands/ban-user.ts'
import { endAllSessions, revokeAllSessions } from './commands/refresh-session.ts'
import { openSessions } from './projections/sessions.ts'
import { operatorSetPlan } from './commands/subscription.ts'
import { ApiError, verifyFile } from './client/verify-file.ts'

const positiveInt = (v: string): number => {
  const n = Number(v)
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number')
  return n
}

const program = new Command()
program.name('svc').description('Email verification service').showHelpAfterError()

/** Runs a role until SIGTERM/SIGINT, then stops it gracefully (in-flight work finishes). */
async function runRole (role: Role): Promise<void> {
  const service = await startRole(role, loadConfig())
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
  .description('run the projections into the read store, from their checkpoints (one process projects at a time)')
  .action(async () => { await runRole('projector') })

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
    .description(name === 'ban' ? 'ban an account: sign-in and every credential answer 401, its sessions are revoked' : 'lift a ban')
    .requiredOption('--email <address>', 'account email')
    .option('--reason <text>', 'why (kept in the event for audit)', 'operator decision')
    .action(async (opts: { email: string, reason: string }) => {
      await operatorCommand(async core => type === 'BanUser' ? await banUser(core.ctx, opts.email, opts.reason, operator()) : await unbanUser(core.ctx, opts.email, operator()))
    })
}

const sessions = program.command('sessions').description('operator commands on sign-in sessions')
sessions.command('end')
  .description('end sessions without a ban (ASVS 5.0 V7.4.5): every session of one account, or of every account; access ends at once, each must sign in again')
  .option('--email <address>', 'the account whose sessions end')
  .option('--all', 'every open session of every account')
  .action(async (opts: { email?: string, all?: boolean }) => {
    if ((opts.email === undefined) === (opts.all !== true)) {
      console.error('error: give either --email <address> or --all')
      process.exitCode = 2
      return
    }
    await operatorCommand(async core => {
      if (opts.email !== undefined) {
        const owner = await accountOfEmail(core.ctx, opts.email)
        if (!owner) throw new DomainError('not_found', 'end_sessions.not_found', 'no account with that email')
        const before = (await openSessions(core.ctx, owner)).length
        await revokeAllSessions(core.ctx, owner, null, `operator:${operator()}`)
        return { user_uuid: owner, sessions_ended: before }
      }
      const bar = progressBar('end sessions', 'sessions')
      try {
        return await endAllSessions(core.ctx, `operator:${operator()}`, n => { bar.update(n, n) })
      } finally { bar.stop() }
    })
  })

/** A progress bar on stderr (when it is a terminal, or with SVC_PROGRESS=1), with the rate in events per second. */
function progressBar (label: string, unit = 'events'): { update: (position: number, end: number) => void, stop: () => void } {
  const bar = new SingleBar({ format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {rate} ${unit}/s | ETA {eta_formatted}`, stream: process.stderr, noTTYOutput: process.env.SVC_PROGRESS === '1', hideCursor: true }, Presets.shades_classic)
  const t0 = Date.now()
  let started = false
  return {
    update: (position, end) => {
      const rate = Math.round(position / Math.max(1, Date.now() - t0) * 1000)
      if (!started) { bar.start(end, position, { rate }); started = true } else { bar.setTotal(end); bar.update(position, { rate }) }
    },
    stop: () => { if (started) bar.stop() }
  }
}

const projections = program.command('projections').description('operator commands on read models')
projections.command('rebuild')
  .description('rebuild read models beside the live ones from every event, then switch to them (the service keeps serving)')
  .argument('<name>', `a projection (${PROJECTIONS.map(p => p.name).join(', ')}) or all`)
  .action(async (name: string) => {
    await operatorCommand(async core => {
      const chosen = name === 'all' ? PROJECTIONS : [projectionNamed(name)]
      const bar = progressBar(`rebuild ${name}`)
      const t0 = Date.now()
      try {
        const r = await rebuildProjections(core.store, core.ctx.reads, chosen, bar.update)
        const seconds = (Date.now() - t0) / 1000
        return { projections: chosen.map(p => p.name), events: r.events, seconds, events_per_s: Math.round(r.events / Math.max(seconds, 0.001)), switched: r.switched }
      } finally { bar.stop() }
    })
  })

const ledger = program.command('ledger').description('operator commands on the ledger')
ledger.command('audit')
  .description('replay the wallet-* streams alone and compare every balance and transaction with what the API shows; exits 1 on a difference')
  .option('--email <address>', 'audit one account')
  .action(async (opts: { email?: string }) => {
    await operatorCommand(async core => {
      const owner = opts.email === undefined ? undefined : await accountOfEmail(core.ctx, opts.email)
      if (owner === null) throw new DomainError('not_found', 'ledger_audit.no_account', 'no account with that email')
      // The read models as this store holds them: brought up to date first (or followed, when another process projects).
      const runner = new ProjectionRunner(core.store, PROJECTIONS, core.ctx.reads)
      await runner.start()
      await runner.stop()
      const bar = progressBar('ledger audit')
      try {
        const r = await auditLedger(core.store, core.ctx, { owner, onProgress: bar.update })
        if (r.differences.length > 0) process.exitCode = 1
        return { ok: r.differences.length === 0, ...r }
      } finally { bar.stop() }
    })
  })

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

const subscription = program.command('subscription').description('operator commands on subscriptions')
subscription.command('set')
  .description('move an account to a plan (free ends a paid one), appending what billing appends: the plan change and one period\'s tokens')
  .requiredOption('--email <address>', 'account email')
  .requiredOption('--plan <code>', 'plan code from the plan catalogue')
  .option('--cycle <cycle>', 'monthly or yearly', 'monthly')
  .option('--period-end <date-time>', 'end of the current period (RFC 3339)')
  .option('--no-grant', 'change the plan without granting its tokens')
  .action(async (opts: { email: string, plan: string, cycle: string, periodEnd?: string, grant: boolean }) => {
    await operatorCommand(async core => await operatorSetPlan(core.ctx, { email: opts.email, plan: opts.plan, cycle: opts.cycle, period_end: opts.periodEnd ?? null, grant: opts.grant, operator: operator() }))
  })

program.command('verify-file')
  .description('verify the addresses of a CSV file (or one per line) through the public API as one batch, writing results as they complete; resumable')
  .argument('<input>', 'CSV with an `email` column (or --column), or one address per line')
  .requiredOption('--out <results.csv>', 'where results go (email, verdict, reason, score, flags, did_you_mean), in input order')
  .option('--api-url <url>', 'the service (default: SVC_API_URL, else http://127.0.0.1:8080)')
  .option('--api-key <key>', 'an API key with email:verify:bulk and results:read (default: SVC_API_KEY)')
  .option('--chunk-size <n>', 'addresses per request, at most the plan\'s max_chunk_size', positiveInt, 1000)
  .option('--column <name>', 'the column holding the addresses')
  .option('--checks <list>', 'comma-separated checks (default: every check the key and plan allow)')
  .option('--name <text>', 'a name for the batch')
  .option('--resume <batch-uuid>', 'go on with an interrupted run of this batch (its state is kept beside --out)')
  .action(async (input: string, opts: { out: string, apiUrl?: string, apiKey?: string, chunkSize: number, column?: string, checks?: string, name?: string, resume?: string }) => {
    const apiKey = opts.apiKey ?? process.env.SVC_API_KEY
    if (!apiKey) { console.error('error: an API key is needed (--api-key or SVC_API_KEY)'); process.exitCode = 2; return }
    const bar = progressBar('verify', 'addresses')
    try {
      const r = await verifyFile({ input, out: opts.out, api_url: opts.apiUrl ?? process.env.SVC_API_URL ?? 'http://127.0.0.1:8080', api_key: apiKey, chunk_size: opts.chunkSize, column: opts.column, checks: opts.checks?.split(',').map(c => c.trim()).filter(c => c !== ''), name: opts.name, resume: opts.resume, onProgress: bar.update })
      bar.stop()
      console.log(JSON.stringify(r))
    } catch (err) {
      bar.stop()
      if (!(err instanceof ApiError)) throw err
      console.error(`error: ${err.message}${err.code ? ` (${err.code})` : ''}`)
      process.exitCode = 1
    }
  })

program.parseAsync().catch(err => {
  console.error(err instanceof Error ? err.message : err)
  process.exit(1)
})
