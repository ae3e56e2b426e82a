import type { Test } from 'tap'
import { execFileSync } from 'node:child_process'

/** A network namespace joined to this one by a veth pair: `host_ip` on our side, `ns_ip` inside; `exec` runs a command inside it. */
export interface Namespace {
  name: string
  /** Our end of the pair (reachable from inside the namespace: its only way out). */
  host_ip: string
  /** Its end (where a process inside listens for us). */
  ns_ip: string
  /** The prefix that runs a command inside: `ip netns exec <name>`. */
  exec: string[]
}

/**
 * Whether this process can make network namespaces: root on Linux (CI runs the suite as
 * root). A test file whose point is a namespace says so and is counted as skipped without.
 */
export const canMakeNamespaces = (): boolean => process.platform === 'linux' && process.getuid?.() === 0

const ip = (...args: string[]): void => {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] })
}

/**
 * A network namespace for a process that must not reach this machine's loopback (the
 * mail world's port 25 there really refuses it: the namespace's own loopback has nothing
 * listening): it reaches only `host_ip` over a veth pair (a /30 of 10.x chosen by the pid).
 * Needs root (CAP_NET_ADMIN); deleted at the test's teardown, with its veth pair.
 */
export function isolatedNamespace(t: Test): Namespace {
  const id = process.pid % 65_536
  const name = `svc-egress-${process.pid}`
  const a = 64 + (id >> 10)
  const b = ((id >> 4) & 63) * 4
  const hostIp = `10.${a}.${b}.1`
  const nsIp = `10.${a}.${b}.2`
  const hostEnd = `veh${id}`
  const nsEnd = `ven${id}`
  ip('netns', 'add', name)
  t.teardown(() => {
    ip('netns', 'del', name)
  })
  ip('link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', nsEnd)
  ip('link', 'set', nsEnd, 'netns', name)
  ip('addr', 'add', `${hostIp}/30`, 'dev', hostEnd)
  ip('link', 'set', hostEnd, 'up')
  ip('netns', 'exec', name, 'ip', 'addr', 'add', `${nsIp}/30`, 'dev', nsEnd)
  ip('netns', 'exec', name, 'ip', 'link', 'set', nsEnd, 'up')
  ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up')
  return { name, host_ip: hostIp, ns_ip: nsIp, exec: ['ip', 'netns', 'exec', name] }
}
