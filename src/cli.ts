#!/usr/bin/env node
import { Command, Help, InvalidArgumentError, Option, type CommanderError } from 'commander'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { userInfo } from 'node:os'
import { SingleBar, Presets } from 'cli-progress'
import { loadConfig } from './config.ts'
import { openCore, startRole, type Role } from './main.ts'
import { PROJECTIONS, projectionNamed } from './projections/index.ts'
import { ProjectionRunner } from './projections/runner.ts'
import { rebuildProjections } from './projections/rebuild.ts'
import { auditLedger } from './projections/ledger-audit.ts'
import { requireAccount } from './commands/email-index.ts'
import { accountSummary } from './projections/account-summary.ts'
import { filedMailsTo } from './infra/mail/nodemailer.ts'
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

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version

/**
 * The `svc` command line. One style for every command (DEVELOPERS.md "Operator
 * commands"): named options (required ones marked in `--help`), JSON on stdout, progress
 * on stderr, `error: <what> (<code>)` on stderr; exit 0 on success, 1 for a failure (an
 * unknown account, a refused change, an unreachable store), 2 for a usage error (an
 * unknown command or option, a missing or malformed value).
 */
const program = new Command()
program.name('svc').description('Email verification service').version(VERSION, '-V, --version', 'print the version')
  .showHelpAfterError('(svc --help lists the commands; svc <command> --help their options)')
  // Usage errors exit 2 (commander's own is 1); --help and --version exit 0.
  .exitOverride((err: CommanderError) => { process.exit(err.exitCode === 0 ? 0 : 2) })
  .configureHelp({ optionDescription: (option: Option) => `${Help.prototype.optionDescription.call(new Help(), option)}${option.mandatory ? ' (required)' : ''}` })

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
    if (service !== 'verifier' && service !== 'webhooks' && service !== 'mailer') usage(`unknown worker "${service}"; one of: verifier, webhooks, mailer`)
    await runRole(`worker:${service}`)
  })

const operator = (): string => process.env.SVC_OPERATOR ?? userInfo().username

/** A usage error: said on stderr, exit 2. */
function usage (message: string): never {
  console.error(`error: ${message}`)
  process.exit(2)
}

/**
 * Runs an operator command against the configured stores (it works while the service
 * runs): prints its JSON result, or `error: <message> (<code>)` and exit code 1.
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
    if ((opts.email === undefined) === (opts.all !== true)) usage('give either --email <address> or --all')
    await operatorCommand(async core => {
      if (opts.email !== undefined) {
        const owner = await requireAccount(core.ctx, opts.email)
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
      const owner = opts.email === undefined ? undefined : await requireAccount(core.ctx, opts.email)
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
  .addOption(new Option('--cycle <cycle>', 'billing cycle').choices(['monthly', 'yearly']).default('monthly'))
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
    if (!apiKey) usage('an API key is needed (--api-key or SVC_API_KEY)')
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

accounts.command('show')
  .description('what an operator may see of an account: status, plan, balance, keys (prefixes), agents and open sessions; nothing secret')
  .requiredOption('--email <address>', 'account email')
  .action(async (opts: { email: string }) => {
    await operatorCommand(async core => {
      const owner = await requireAccount(core.ctx, opts.email)
      // The read models as this store holds them: brought up to date first (or followed, when another process projects).
      const runner = new ProjectionRunner(core.store, PROJECTIONS, core.ctx.reads)
      await runner.start()
      await runner.stop()
      const summary = await accountSummary(core.ctx, core.ctx.config.plans, owner)
      if (summary === null) throw new DomainError('not_found', 'account.not_found', `no account with the address ${opts.email}`)
      return summary
    })
  })

const mail = program.command('mail').description('the mail filed on the embedded default (no SMTP_URL): DATA_DIR/outbox')
mail.command('show')
  .description('the newest mail filed for an address, with the code or link it carries (confirmation code, reset or email-change link)')
  .requiredOption('--to <address>', 'the recipient')
  .option('--wait <seconds>', 'wait this long for one to arrive (the mail is filed just after the request that asks for it answers)', v => { const n = Number(v); if (!Number.isFinite(n) || n < 0 || n > 600) throw new InvalidArgumentError('seconds from 0 to 600'); return n }, 0)
  .action(async (opts: { to: string, wait: number }) => {
    const config = loadConfig()
    if (config.smtp_url !== null) usage('SMTP_URL is set: mail is sent, not filed (read it in the mailbox)')
    const dir = join(config.data_dir, 'outbox')
    const deadline = Date.now() + opts.wait * 1000
    for (;;) {
      const [newest] = await filedMailsTo(dir, opts.to)
      if (newest) {
        const code = /\b(\d{6})\b/.exec(newest.text)?.[1] ?? null
        const link = /https?:\/\/\S+\?token=\S+/.exec(newest.text)?.[0] ?? null
        console.log(JSON.stringify({ ...newest, code, link }))
        return
      }
      if (Date.now() >= deadline) break
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    console.error(`error: no mail to ${opts.to} in ${dir}${opts.wait > 0 ? ` after ${opts.wait} s` : ''} (mail.not_found)`)
    process.exitCode = 1
  })

program.parseAsync().catch(err => {
  console.error(`error: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})
