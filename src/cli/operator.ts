import { type Command, Option } from 'commander'
import { DomainError } from '../domain/shared.ts'
import { catchUpReadModels, operator, operatorCommand, positiveInt, progressBar, usage } from './common.ts'

/**
 * The operator's commands on the configured stores (they work while the service runs):
 * accounts (ban, unban, show), sessions, projections, the ledger's audit, wallet grants and
 * subscriptions. Each prints JSON; a refusal is `error: <message> (<code>)`, exit 1.
 */
export function registerOperatorCommands(program: Command): void {
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
        const [{ banUser }, { unbanUser }] = await Promise.all([import('../flows/revoke-sessions/ban-user.ts'), import('../commands/user/unban-user.ts')])
        await operatorCommand(async core =>
          type === 'BanUser' ? await banUser(core.ctx, opts.email, opts.reason, operator()) : await unbanUser(core.ctx, opts.email, operator())
        )
      })
  }

  const sessions = program.command('sessions').description('operator commands on sign-in sessions')
  sessions
    .command('end')
    .description(
      'end sessions without a ban (ASVS 5.0 V7.4.5): every session of one account, or of every account; access ends at once, each must sign in again'
    )
    .option('--email <address>', 'the account whose sessions end')
    .option('--all', 'every open session of every account')
    .action(async (opts: { email?: string; all?: boolean }) => {
      if ((opts.email === undefined) === (opts.all !== true)) usage('give either --email <address> or --all')
      const [{ requireAccount }, { openSessions }, { endAllSessions, revokeAllSessions }] = await Promise.all([
        import('../commands/user/read.ts'),
        import('../projections/sessions.ts'),
        import('../commands/session/revoke-all-sessions.ts')
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

  const projections = program.command('projections').description('operator commands on read models')
  projections
    .command('rebuild')
    .description('rebuild read models beside the live ones from every event, then switch to them (the service keeps serving)')
    .argument('<name>', 'a projection (users, jobs, batches, wallets, …: an unknown name lists them) or all')
    .action(async (name: string) => {
      const [{ PROJECTIONS, projectionNamed }, { rebuildProjections }] = await Promise.all([
        import('../projections/index.ts'),
        import('../eventsourcing/rebuild.ts')
      ])
      if (name !== 'all' && !PROJECTIONS.some(p => p.name === name)) usage(`no projection ${name}; one of: ${PROJECTIONS.map(p => p.name).join(', ')}, all`)
      await operatorCommand(async core => {
        const chosen = name === 'all' ? PROJECTIONS : [projectionNamed(name)]
        const bar = progressBar(`rebuild ${name}`)
        const t0 = Date.now()
        try {
          const r = await rebuildProjections(core.store, core.ctx.reads, chosen, { onProgress: bar.update })
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
      const [{ requireAccount }, { auditLedger }] = await Promise.all([import('../commands/user/read.ts'), import('../projections/ledger-audit.ts')])
      await operatorCommand(async core => {
        const owner = opts.email === undefined ? undefined : await requireAccount(core.ctx, opts.email)
        await catchUpReadModels(core)
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
      const { grantTokens } = await import('../commands/wallet/grant-tokens.ts')
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
      const { operatorSetPlan } = await import('../flows/plan-change/operator-set-plan.ts')
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

  accounts
    .command('show')
    .description('what an operator may see of an account: status, plan, balance, keys (prefixes), agents and open sessions; nothing secret')
    .requiredOption('--email <address>', 'account email')
    .action(async (opts: { email: string }) => {
      const [{ requireAccount }, { accountSummary }] = await Promise.all([import('../commands/user/read.ts'), import('../projections/account-summary.ts')])
      await operatorCommand(async core => {
        const owner = await requireAccount(core.ctx, opts.email)
        await catchUpReadModels(core)
        const summary = await accountSummary(core.ctx, core.ctx.config.plans, owner)
        if (summary === null) throw new DomainError('not_found', 'account.not_found', `no account with the address ${opts.email}`)
        return summary
      })
    })
}
