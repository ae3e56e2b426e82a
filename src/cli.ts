#!/usr/bin/env node
import { Command, Help, InvalidArgumentError, Option, type CommanderError } from 'commander'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { userInfo } from 'node:os'
import { SingleBar, Presets } from 'cli-progress'
import type { Role } from './main.ts'
import { DomainError } from './domain/shared.ts'

// The commands load what they use when they run (dynamic imports): `svc verify-file`, a
// client of the public API, never loads the service, and `svc --help` stays quick.
const loadConfig = async (): Promise<import('./config.ts').Config> => (await import('./config.ts')).loadConfig()
type Core = Awaited<ReturnType<typeof import('./main.ts')['openCore']>>

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
program
  .name('svc')
  .description('Email verification service')
  .version(VERSION, '-V, --version', 'print the version')
  .showHelpAfterError('(svc --help lists the commands; svc <command> --help their options)')
  // Usage errors exit 2 (commander's own is 1); --help and --version exit 0.
  .exitOverride((err: CommanderError) => {
    process.exit(err.exitCode === 0 ? 0 : 2)
  })
  .configureHelp({
    optionDescription: (option: Option) => `${Help.prototype.optionDescription.call(new Help(), option)}${option.mandatory ? ' (required)' : ''}`
  })

/** Runs a role until SIGTERM/SIGINT, then stops it gracefully (in-flight work finishes). */
async function runRole(role: Role): Promise<void> {
  const { startRole } = await import('./main.ts')
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

program
  .command('serve')
  .description('run everything in one process (API, projections, relay, workers): what npm start runs')
  .action(async () => {
    await runRole('serve')
  })

program
  .command('api')
  .description('run the HTTP API with its read models (projections) only')
  .action(async () => {
    await runRole('api')
  })

program
  .command('projector')
  .description('run the projections into the read store, from their checkpoints (one process projects at a time)')
  .action(async () => {
    await runRole('projector')
  })

program
  .command('relay')
  .description('run the relay: committed events to the bus (NATS_URL), from its checkpoint')
  .action(async () => {
    await runRole('relay')
  })

program
  .command('worker')
  .description('run one worker service that consumes the bus')
  .argument('<service>', 'verifier | webhooks | mailer')
  .action(async (service: string) => {
    if (service !== 'verifier' && service !== 'webhooks' && service !== 'mailer') usage(`unknown worker "${service}"; one of: verifier, webhooks, mailer`)
    await runRole(`worker:${service}`)
  })

const operator = (): string => process.env.SVC_OPERATOR ?? userInfo().username

/** A usage error: said on stderr, exit 2. */
function usage(message: string): never {
  console.error(`error: ${message}`)
  process.exit(2)
}

/**
 * Runs an operator command against the configured stores (it works while the service
 * runs): prints its JSON result, or `error: <message> (<code>)` and exit code 1.
 */
async function operatorCommand(fn: (core: Core) => Promise<unknown>): Promise<void> {
  const { openCore } = await import('./main.ts')
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

const accounts = program.command('accounts').description('operator commands on accounts')
for (const [name, type] of [
  ['ban', 'BanUser'],
  ['unban', 'UnbanUser']
] as const) {
  accounts
    .command(name)
    .description(name === 'ban' ? 'ban an account: sign-in and every credential answer 401, its sessions are revoked' : 'lift a ban')
    .requiredOption('--email <address>', 'account email')
    .option('--reason <text>', 'why (kept in the event for audit)', 'operator decision')
    .action(async (opts: { email: string; reason: string }) => {
      const [{ banUser }, { unbanUser }] = await Promise.all([import('./commands/user/ban-user.ts'), import('./commands/user/unban-user.ts')])
      await operatorCommand(async core =>
        type === 'BanUser' ? await banUser(core.ctx, opts.email, opts.reason, operator()) : await unbanUser(core.ctx, opts.email, operator())
      )
    })
}

const sessions = program.command('sessions').description('operator commands on sign-in sessions')
sessions
  .command('end')
  .description('end sessions without a ban (ASVS 5.0 V7.4.5): every session of one account, or of every account; access ends at once, each must sign in again')
  .option('--email <address>', 'the account whose sessions end')
  .option('--all', 'every open session of every account')
  .action(async (opts: { email?: string; all?: boolean }) => {
    if ((opts.email === undefined) === (opts.all !== true)) usage('give either --email <address> or --all')
    const [{ requireAccount }, { openSessions }, { endAllSessions, revokeAllSessions }] = await Promise.all([
      import('./commands/user/email-claims.ts'),
      import('./projections/sessions.ts'),
      import('./commands/session/revoke-all-sessions.ts')
    ])
    await operatorCommand(async core => {
      if (opts.email !== undefined) {
        const owner = await requireAccount(core.ctx, opts.email)
        const before = (await openSessions(core.ctx, owner)).length
        await revokeAllSessions(core.ctx, owner, null, `operator:${operator()}`)
        return { user_uuid: owner, sessions_ended: before }
      }
      const bar = progressBar('end sessions', 'sessions')
      try {
        return await endAllSessions(core.ctx, `operator:${operator()}`, n => {
          bar.update(n, n)
        })
      } finally {
        bar.stop()
      }
    })
  })

/** A progress bar on stderr (when it is a terminal, or with SVC_PROGRESS=1), with the rate in events per second. */
function progressBar(label: string, unit = 'events', open = false, resumable = false): { update: (position: number, end: number) => void; stop: () => void } {
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

const projections = program.command('projections').description('operator commands on read models')
projections
  .command('rebuild')
  .description('rebuild read models beside the live ones from every event, then switch to them (the service keeps serving)')
  .argument('<name>', 'a projection (users, jobs, batches, wallets, …: an unknown name lists them) or all')
  .action(async (name: string) => {
    const [{ PROJECTIONS, projectionNamed }, { rebuildProjections }] = await Promise.all([import('./projections/index.ts'), import('./projections/rebuild.ts')])
    if (name !== 'all' && !PROJECTIONS.some(p => p.name === name)) usage(`no projection ${name}; one of: ${PROJECTIONS.map(p => p.name).join(', ')}, all`)
    await operatorCommand(async core => {
      const chosen = name === 'all' ? PROJECTIONS : [projectionNamed(name)]
      const bar = progressBar(`rebuild ${name}`)
      const t0 = Date.now()
      try {
        const r = await rebuildProjections(core.store, core.ctx.reads, chosen, bar.update)
        const seconds = (Date.now() - t0) / 1000
        return {
          projections: chosen.map(p => p.name),
          events: r.events,
          seconds,
          events_per_s: Math.round(r.events / Math.max(seconds, 0.001)),
          switched: r.switched
        }
      } finally {
        bar.stop()
      }
    })
  })

const ledger = program.command('ledger').description('operator commands on the ledger')
ledger
  .command('audit')
  .description('replay the wallet-* streams alone and compare every balance and transaction with what the API shows; exits 1 on a difference')
  .option('--email <address>', 'audit one account')
  .action(async (opts: { email?: string }) => {
    const [{ requireAccount }, { PROJECTIONS }, { ProjectionRunner }, { auditLedger }] = await Promise.all([
      import('./commands/user/email-claims.ts'),
      import('./projections/index.ts'),
      import('./projections/runner.ts'),
      import('./projections/ledger-audit.ts')
    ])
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
      } finally {
        bar.stop()
      }
    })
  })

const wallet = program.command('wallet').description('operator commands on wallets')
wallet
  .command('grant')
  .description("credit an account's wallet; appends an auditable TokensGranted event")
  .requiredOption('--email <address>', 'account email')
  .requiredOption('--tokens <n>', 'tokens to credit', positiveInt)
  .requiredOption('--reason <text>', 'why (kept in the event for audit)')
  .action(async (opts: { email: string; tokens: number; reason: string }) => {
    const { grantTokens } = await import('./commands/wallet/grant-tokens.ts')
    await operatorCommand(async core => {
      const r = await grantTokens(core.ctx, { email: opts.email, tokens: opts.tokens, reason: opts.reason, operator: operator() })
      return { granted: opts.tokens, user_uuid: r.user_uuid, grant_uuid: r.grant_uuid, balance: r.balance }
    })
  })

const subscription = program.command('subscription').description('operator commands on subscriptions')
subscription
  .command('set')
  .description("move an account to a plan (free ends a paid one), appending what billing appends: the plan change and one period's tokens")
  .requiredOption('--email <address>', 'account email')
  .requiredOption('--plan <code>', 'plan code from the plan catalogue')
  .addOption(new Option('--cycle <cycle>', 'billing cycle').choices(['monthly', 'yearly']).default('monthly'))
  .option('--period-end <date-time>', 'end of the current period (RFC 3339)')
  .option('--no-grant', 'change the plan without granting its tokens')
  .action(async (opts: { email: string; plan: string; cycle: string; periodEnd?: string; grant: boolean }) => {
    const { operatorSetPlan } = await import('./commands/subscription/operator-set-plan.ts')
    await operatorCommand(
      async core =>
        await operatorSetPlan(core.ctx, {
          email: opts.email,
          plan: opts.plan,
          cycle: opts.cycle,
          period_end: opts.periodEnd ?? null,
          grant: opts.grant,
          operator: operator()
        })
    )
  })

program
  .command('verify-file')
  .description(
    'verify a list file (CSV, TSV, text, XLSX) through the public API and write it back with result columns: every row, in order, with its own columns; resumable'
  )
  .argument('<input>', 'the list: CSV or TSV (delimiter, quoting and header detected), text (one address a line) or XLSX (first sheet)')
  .option('--out <file>', 'the list with result columns, every row in input order (.csv, .tsv or .xlsx: by its name)')
  .option('--split <dir>', 'also one file per verdict in <dir> (valid, risky, invalid, unknown; unverified for empty, unparsable or pending rows)')
  .option('--only <verdicts>', 'only rows of these verdicts in --out (comma-separated: valid,risky,invalid,unknown)')
  .option('--column <name|n>', 'the column holding the addresses: its header name or its number from 1 (detected otherwise)')
  .option('--estimate', 'only say what the list costs against the balance; nothing is sent')
  .option('--partial', 'when the balance does not cover the list: verify what it covers now, mark the rest pending, say what it needs')
  .option('--resume', 'go on with the interrupted or partial run whose state is beside --out (or in --split)')
  .option('--force', "replace an existing --out or --split results (and an interrupted run's state)")
  .option('--api-url <url>', 'the service (default: SVC_API_URL, else http://127.0.0.1:8080)')
  .option('--api-key <key>', 'an API key with email:verify:bulk and results:read (default: SVC_API_KEY)')
  .option('--chunk-size <n>', "addresses per request (default and at most: the plan's max_chunk_size)", positiveInt)
  .option('--checks <list>', 'comma-separated checks (default: every check the key and plan allow)')
  .option('--name <text>', "a name for the batches (default: the input's file name)")
  .action(
    async (
      input: string,
      opts: {
        out?: string
        split?: string
        only?: string
        column?: string
        estimate?: boolean
        partial?: boolean
        resume?: boolean
        force?: boolean
        apiUrl?: string
        apiKey?: string
        chunkSize?: number
        checks?: string
        name?: string
      }
    ) => {
      const apiKey = opts.apiKey ?? process.env.SVC_API_KEY
      if (!apiKey) usage('an API key is needed (--api-key or SVC_API_KEY)')
      const [{ ListError, VERDICTS }, { verifyFileInWorker }] = await Promise.all([import('./client/lists/run.ts'), import('./client/lists/worker.ts')])
      if (!opts.estimate && opts.out === undefined && opts.split === undefined)
        usage('say where results go: --out <file>, --split <dir>, or both (or --estimate)')
      const only = opts.only
        ?.split(',')
        .map(v => v.trim())
        .filter(v => v !== '')
      if (only?.some(v => !(VERDICTS as readonly string[]).includes(v))) usage(`--only takes verdicts among ${VERDICTS.join(', ')}`)
      if (opts.only !== undefined && opts.out === undefined) usage('--only filters --out: give --out too')
      const bars = new Map<string, ReturnType<typeof progressBar>>()
      const controller = new AbortController()
      let interrupts = 0
      const onInterrupt = (): void => {
        if (++interrupts > 1) process.exit(130)
        process.stderr.write('\nstopping: writing the results already done (Ctrl-C again to quit at once)\n')
        controller.abort()
      }
      process.on('SIGINT', onInterrupt)
      try {
        const r = await verifyFileInWorker(
          {
            input,
            out: opts.out,
            split: opts.split,
            only: only as Array<(typeof VERDICTS)[number]> | undefined,
            force: opts.force === true,
            estimate: opts.estimate === true,
            partial: opts.partial === true,
            resume: opts.resume === true,
            api_url: opts.apiUrl ?? process.env.SVC_API_URL ?? 'http://127.0.0.1:8080',
            api_key: apiKey,
            chunk_size: opts.chunkSize,
            column: opts.column,
            checks: opts.checks
              ?.split(',')
              .map(c => c.trim())
              .filter(c => c !== ''),
            name: opts.name
          },
          (phase, done, total) => {
            let bar = bars.get(phase)
            if (!bar) {
              for (const b of bars.values()) b.stop()
              bar = progressBar(phase, phase === 'verify' ? 'addresses' : 'rows', total === null, phase === 'verify')
              bars.set(phase, bar)
            }
            bar.update(done, total ?? done)
          },
          controller.signal
        )
        for (const b of bars.values()) b.stop()
        console.log(JSON.stringify(r))
        if ('complete' in r && !r.complete) {
          console.error(
            `${r.pending_rows} rows pending: ${r.stopped ?? ''}${r.tokens_needed > 0 ? `; the rest needs ${r.tokens_needed} tokens` : ''}; run again with --resume to finish`
          )
          if (!opts.partial || (r.stopped !== null && !r.stopped.startsWith('the balance covered'))) process.exitCode = 1
        }
      } catch (err) {
        for (const b of bars.values()) b.stop()
        if (!(err instanceof ListError)) throw err
        console.error(`error: ${err.message}${err.code ? ` (${err.code})` : ''}`)
        process.exitCode = 1
      } finally {
        process.off('SIGINT', onInterrupt)
      }
    }
  )

accounts
  .command('show')
  .description('what an operator may see of an account: status, plan, balance, keys (prefixes), agents and open sessions; nothing secret')
  .requiredOption('--email <address>', 'account email')
  .action(async (opts: { email: string }) => {
    const [{ requireAccount }, { PROJECTIONS }, { ProjectionRunner }, { accountSummary }] = await Promise.all([
      import('./commands/user/email-claims.ts'),
      import('./projections/index.ts'),
      import('./projections/runner.ts'),
      import('./projections/account-summary.ts')
    ])
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
mail
  .command('show')
  .description('the newest mail filed for an address, with the code or link it carries (confirmation code, reset or email-change link)')
  .requiredOption('--to <address>', 'the recipient')
  .option(
    '--wait <seconds>',
    'wait this long for one to arrive (the mail is filed just after the request that asks for it answers)',
    v => {
      const n = Number(v)
      if (!Number.isFinite(n) || n < 0 || n > 600) throw new InvalidArgumentError('seconds from 0 to 600')
      return n
    },
    0
  )
  .action(async (opts: { to: string; wait: number }) => {
    const config = await loadConfig()
    const { filedMailsTo } = await import('./infra/mail/nodemailer.ts')
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
