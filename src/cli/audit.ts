import type { Command } from 'commander'
import { catchUpReadModels, operatorCommand } from './common.ts'

/**
 * `svc audit`: lists what is begun and not finished — each
 * flow's trigger events the relay has not handed over yet, the deliveries held for later
 * and the dead letters — one JSON object, `ok` false (exit 1) when a flow is older than its
 * bound or a delivery was given up, or, with `--strict`, when anything at all is pending.
 * `--ledger` also replays the wallet streams (`svc ledger audit`). Works on the stores
 * alone, the service running or not.
 */
export function registerAudit(program: Command): void {
  program
    .command('audit')
    .description('list flows begun and not finished, held deliveries and dead letters; exits 1 when one is over its bound (or, --strict, when any is pending)')
    .option('--strict', 'exit 1 when anything at all is pending')
    .option('--ledger', 'also replay the wallet streams and compare every balance (svc ledger audit)')
    .action(async (opts: { strict?: boolean; ledger?: boolean }) => {
      const [{ pendingFlows }, { FLOWS }, { ROUTES }] = await Promise.all([
        import('../eventsourcing/pending-flows.ts'),
        import('../flows/index.ts'),
        import('../main.ts')
      ])
      await operatorCommand(async core => {
        const holds = core.holds
        const pending = await pendingFlows(core.store, await core.checkpoints.getCheckpoint('relay'), holds, FLOWS, Object.keys(ROUTES), core.ctx.now())
        let ledger: { ok: boolean; differences: unknown[] } | null = null
        if (opts.ledger) {
          const { auditLedger } = await import('../projections/ledger-audit.ts')
          await catchUpReadModels(core)
          const r = await auditLedger(core.store, core.ctx)
          ledger = { ok: r.differences.length === 0, differences: r.differences }
        }
        const failing = pending.items.filter(i => i.over_bound || opts.strict === true)
        const ok = failing.length === 0 && (ledger === null || ledger.ok)
        if (!ok) process.exitCode = 1
        return { ok, pending: pending.items, truncated: pending.truncated, ...(ledger !== null && { ledger }) }
      })
    })
}
