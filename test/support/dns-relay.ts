import { createSocket } from 'node:dgram'
import type { Test } from 'tap'

/** A resolver a test can silence: `server` (`ip:port`) for VERIFIER_DNS_SERVERS, `alive` to turn it on and off. */
export interface DnsRelay {
  readonly server: string
  alive: boolean
}

/**
 * A UDP relay on `ip` to the mail world's resolver `upstream` (`ip:port`): it passes every
 * query and its answer while `alive`, and drops every query otherwise (a dead resolver, as
 * the egress self-test sees one). Closed by the test's teardown.
 */
export async function startDnsRelay(t: Test, upstream: string, ip: string): Promise<DnsRelay> {
  const relay = createSocket('udp4')
  const out = createSocket('udp4')
  const askers = new Map<number, { port: number; address: string }>()
  const [host, port] = upstream.split(':')
  const state: { server: string; alive: boolean } = { server: '', alive: true }
  relay.on('message', (msg, from) => {
    if (!state.alive) return
    askers.set(msg.readUInt16BE(0), { port: from.port, address: from.address })
    out.send(msg, Number(port), host)
  })
  out.on('message', msg => {
    const asker = askers.get(msg.readUInt16BE(0))
    if (asker && state.alive) relay.send(msg, asker.port, asker.address)
  })
  await new Promise<void>(resolve => relay.bind(0, ip, resolve))
  await new Promise<void>(resolve => out.bind(0, ip, resolve))
  t.teardown(() => {
    relay.close()
    out.close()
  })
  state.server = `${ip}:${relay.address().port}`
  return state
}
