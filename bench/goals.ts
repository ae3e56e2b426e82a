/**
 * The three ratios with goals, said from one run's
 * figures: submissions against a bare route (bench/submissions.ts), the rebuild against the
 * store's floor (bench/read-side.ts section 2b) and the engine against the simulated
 * world's lower bound (bench/engine.ts).
 */
export function goalsSummary(figures: Record<string, any>): string {
  const { engine, read_side: rs, submissions: sub } = figures
  const rebuildToFloor = Math.round((rs.rebuild_share_of_raw_read / rs.sqlite_write_floor.share_of_raw_read) * 100) / 100
  return [
    '',
    'Ratios and their goals, measured in this run:',
    `  submissions: a live key ${sub.ratios.live_to_bare}, a test key ${sub.ratios.test_to_bare} of a bare fastify route (goal ≥ ${sub.goals.ratio_to_bare}); p99 ${sub.live.p99_ms} and ${sub.test.p99_ms} ms (goal < ${sub.goals.p99_ms}); resident memory after the load ${sub.service_rss_mib_after} MiB (goal < ${sub.goals.rss_mib})`,
    `  rebuild: ${rebuildToFloor} of the store's floor (SQLite writing the same rows and indexes alone) at ${rs.jobs} jobs (goal ≥ 0.8); its reads and folds alone, writing nothing, reach ${rs.folds_alone.floor_share} of it`,
    `  engine: ${engine.engine.vs_lower_bound}× the latency lower bound of the simulated world, ${engine.engine.agreement}% agreement (goal ≤ 1.25×)`
  ].join('\n')
}
