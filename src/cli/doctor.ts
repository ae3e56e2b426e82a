import type { Command } from 'commander'
import { readFileSync } from 'node:fs'

/** Keys whose values are credentials: printed as `[set]` or null, never their value. */
const SECRET_KEY = /password|secret|token(?!_ttl)|(^|_)key$|credentials|user$/i

/**
 * A configuration as it may be printed: credentials replaced by `[set]` (null stays null),
 * user and password taken out of URLs (`nats://***@host`), the plan catalogue counted
 * rather than listed. Never prints a password, token or key.
 */
function elideSecrets(value: unknown, key = ''): unknown {
  if (value === null || value === undefined) return value ?? null
  if (SECRET_KEY.test(key)) return '[set]'
  if (typeof value === 'string') return elideUrl(value)
  if (Array.isArray(value)) return value.map(v => elideSecrets(v))
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, elideSecrets(v, k)]))
  return value
}

/** A URL without its user and password (anything else unchanged). */
function elideUrl(value: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return value
  try {
    const url = new URL(value)
    if (url.username === '' && url.password === '') return value
    url.username = '***'
    url.password = ''
    return url.toString()
  } catch {
    return value
  }
}

/** A check bounded by `ms`: its result, or the error (a timeout names itself). */
async function within<T>(ms: number, what: string, f: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: string }> {
  let timer: NodeJS.Timeout | undefined
  try {
    const value = await Promise.race([
      f(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms)
      })
    ])
    return { ok: true, value }
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) }
  } finally {
    clearTimeout(timer)
  }
}

/**
 * `svc doctor`: prints the configuration (secrets elided), whether each store answers
 * (event store, read store, data keys, NATS when configured; with DATABASE_URL the pool's
 * size, the server's version and the schema's), the egress self-test of every
 * route (DNS, port 25, the banner; whatever `VERIFIER_EGRESS_TEST_INTERVAL_S` says) and the
 * versions, and the flows begun and not finished (`svc audit`), as one JSON object; exits 1
 * when something is wrong (an invalid configuration, a store that does not answer, a flow
 * older than its bound or a delivery given up, egress failing).
 */
export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('check the configuration, the stores and egress to port 25; prints JSON, exits 1 when something is wrong')
    .option('--timeout-ms <ms>', 'bound on each store check (ms)', '5000')
    .action(async (opts: { timeoutMs: string }) => {
      const timeoutMs = Number(opts.timeoutMs)
      if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) {
        console.error('error: --timeout-ms must be a positive whole number')
        process.exit(2)
      }
      const versions = {
        svc: (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version,
        node: process.versions.node,
        sqlite: process.versions.sqlite ?? null
      }
      let config: import('../config.ts').Config
      try {
        config = (await import('../config.ts')).loadConfig()
      } catch (err) {
        console.log(JSON.stringify({ ok: false, versions, config: { ok: false, error: err instanceof Error ? err.message : String(err) } }))
        process.exitCode = 1
        return
      }
      const [{ openCore }, { testEgress }, { DnsClient }] = await Promise.all([
        import('../core.ts'),
        import('../verifier/egress-monitor.ts'),
        import('../verifier/dns.ts')
      ])
      const stores: Record<string, { ok: boolean; [k: string]: unknown }> = {}
      const opened = await within(timeoutMs, 'opening the stores', async () => await openCore(config))
      if (opened.ok) {
        const core = opened.value
        const head = await within(timeoutMs, 'event store', async () => await core.store.headPosition())
        stores.event_store = {
          kind: config.database ? 'postgresql' : config.eventstore_url ? 'eventstoredb' : 'sqlite',
          ...(head.ok ? { ok: true, head_position: head.value } : head)
        }
        const reads = await within(timeoutMs, 'read store', async () => await core.ctx.reads.getConsumerCheckpoint('relay'))
        stores.read_store = { kind: config.database ? 'postgresql' : config.mongodb_url ? 'mongodb' : 'sqlite', ...(reads.ok ? { ok: true } : reads) }
        const database = core.database
        if (database) {
          // The pool's size, the server's version and the schema's: what an operator checks before and after `svc db migrate`.
          const db = await within(timeoutMs, 'PostgreSQL', async () => {
            const version = (await database.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0].v
            const schema = (await database.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations')).rows[0].v
            return { server_version: version, schema_version: schema }
          })
          stores.database = { kind: 'postgresql', pool_size: config.database!.pool_size, ...(db.ok ? { ok: true, ...db.value } : db) }
        }
        const keys = await within(timeoutMs, 'data keys', async () => core.keys.erasureStatus())
        stores.data_keys = keys.ok ? { ok: true } : keys
        // Flows begun and not finished (svc audit): not ok when one is older than its bound or a delivery was given up.
        const flows = await within(timeoutMs, 'flows', async () => {
          const [{ pendingFlows }, { FLOWS }, { ROUTES }] = await Promise.all([
            import('../eventsourcing/pending-flows.ts'),
            import('../flows/index.ts'),
            import('../main.ts')
          ])
          const holds = core.holds
          return await pendingFlows(core.store, await core.checkpoints.getCheckpoint('relay'), holds, FLOWS, Object.keys(ROUTES), new Date())
        })
        stores.flows = flows.ok
          ? {
              ok: !flows.value.items.some(i => i.over_bound),
              pending: flows.value.items.length,
              over_bound: flows.value.items.filter(i => i.over_bound),
              dead: flows.value.items.filter(i => i.state === 'dead').length
            }
          : flows
        await within(timeoutMs, 'closing the stores', async () => await core.close())
      } else stores.event_store = { ok: false, error: opened.error }
      if (config.nats_url !== null) {
        const url = config.nats_url
        const nats = await within(timeoutMs, 'NATS', async () => {
          const { connect } = await import('@nats-io/transport-node')
          const nc = await connect({ servers: url, timeout: timeoutMs, reconnect: false })
          const rtt = await nc.rtt()
          await nc.close()
          return rtt
        })
        stores.nats = nats.ok ? { ok: true, rtt_ms: nats.value } : nats
      }
      const v = config.verifier
      const egress = await testEgress({
        dns: new DnsClient({ servers: v.dns_servers, timeout_ms: v.dns_timeout_ms }),
        routes: v.routes,
        mx: v.egress_test.mx,
        port: v.smtp_port,
        timeout_ms: v.smtp_timeout_ms
      })
      const { plans, ...rest } = config
      const ok = Object.values(stores).every(s => s.ok) && egress.ok
      console.log(
        JSON.stringify({
          ok,
          versions,
          config: { ok: true, ...(elideSecrets(rest) as Record<string, unknown>), plans: plans.plans.map(p => p.code) },
          stores,
          egress
        })
      )
      if (!ok) process.exitCode = 1
    })
}
