// The engine's composition from the configuration: the verification engine (resolvers,
// probe, egress routes, politeness) and the egress self-test, as every role that verifies
// builds them (src/main.ts wires them into the workers, /readyz and /metrics).
import type { Config } from './config.ts'
import type { NotReady } from './http/runtime.ts'
import { CachingMailResolver, DnsClient } from './verifier/dns.ts'
import { EgressRoutes } from './verifier/egress.ts'
import { EgressMonitor, type EgressState } from './verifier/egress-monitor.ts'
import { VerificationEngine } from './verifier/engine.ts'
import { DEFAULT_POLITENESS } from './verifier/politeness.ts'

/**
 * The verification engine as configured (docs/design/verification.md; `VERIFIER_*` variables).
 * `onProxyError`: told a route's name and the proxy's failure in full, for the operator's
 * log (the job says `proxy_error` only).
 */
export function buildEngine(config: Config, onProxyError?: (route: string, detail: string) => void): VerificationEngine {
  const v = config.verifier
  return new VerificationEngine({
    resolver: new CachingMailResolver(new DnsClient({ servers: v.dns_servers, timeout_ms: v.dns_timeout_ms })),
    probe: {
      port: v.smtp_port,
      helo_name: v.helo_name,
      mail_from: v.mail_from,
      timeout_ms: v.smtp_timeout_ms,
      pipeline_rcpt: v.pipeline_rcpt,
      starttls: v.starttls,
      allow_private_targets: v.allow_private_targets,
      routes: egressRoutes(config),
      ...(onProxyError && { on_proxy_error: onProxyError })
    },
    politeness: {
      ...DEFAULT_POLITENESS,
      max_sessions_per_host: v.max_sessions_per_mx,
      burst_per_host: v.max_sessions_per_mx,
      max_sessions_per_ip: v.max_sessions_per_ip,
      max_sessions: v.max_sessions
    },
    result_cache_ttl_ms: v.result_cache_ttl_ms,
    catch_all_ttl_ms: v.catch_all_ttl_ms,
    greylist: { retry_ms: v.greylist_retry_ms, deadline_ms: v.greylist_deadline_ms },
    pushback_deadline_ms: v.pushback_deadline_ms
  })
}

/** The configured egress routes (the default route last). */
function egressRoutes(config: Config): EgressRoutes {
  const routes = config.verifier.routes
  return new EgressRoutes(routes.slice(0, -1), routes[routes.length - 1])
}

/**
 * The egress self-test as configured (`VERIFIER_EGRESS_TEST_*`): every route to the test MX
 * through the configured resolvers; null when its interval is 0 (off).
 */
export function buildEgressMonitor(config: Config, onChange?: (state: EgressState, previous: EgressState) => void): EgressMonitor | null {
  const v = config.verifier
  if (v.egress_test.interval_ms <= 0) return null
  return new EgressMonitor({
    dns: new DnsClient({ servers: v.dns_servers, timeout_ms: v.dns_timeout_ms }),
    routes: v.routes,
    mx: v.egress_test.mx,
    port: v.smtp_port,
    timeout_ms: v.smtp_timeout_ms,
    interval_ms: v.egress_test.interval_ms,
    on_change: onChange
  })
}

/** What is wrong with egress in a self-test's findings (null when nothing, or before the first test). */
export function egressNotReady(state: EgressState): NotReady | null {
  if (state.checked_at === null || state.ok) return null
  const failed = state.dns.ok ? state.routes.find(r => !r.ok) : null
  return {
    component: 'egress',
    problem: state.problem ?? 'dns_failing',
    detail: state.dns.ok ? `route ${failed?.route} (${failed?.via}): ${failed?.detail}` : state.dns.detail
  }
}
