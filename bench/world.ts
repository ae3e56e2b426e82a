// A simulated mail world for the benchmark, run as its own process (so it has a core of
// its own): an authoritative DNS server and one SMTP server per MX on 127.1.x.y:25, with
// a latency model: the banner comes after `banner_ms`, every other reply after `reply_ms`;
// beyond `max_sessions` concurrent sessions a host answers 421 and closes; greylisting
// hosts answer 450 to an address until `greylist_ms` after they first saw it.
// Usage: node bench/world.ts <spec.json>   (prints "ready <dns ip:port>" when listening)
import { readFileSync } from 'node:fs'
import { createServer, type Socket } from 'node:net'
import { createSocket } from 'node:dgram'
import * as dnsPacket from 'dns-packet'

export interface WorldSpec {
  dns_ip: string
  latency: { banner_ms: number; reply_ms: number }
  max_sessions: number
  greylist_ms: number
  domains: Array<{
    name: string
    mx_host: string
    mx_ip: string
    kind: 'normal' | 'catch_all' | 'greylist'
    /** local part → 'exists' | 'missing' | 'full' */
    mailboxes: Record<string, 'exists' | 'missing' | 'full'>
  }>
}

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8')) as WorldSpec
const { banner_ms: bannerMs, reply_ms: replyMs } = spec.latency

// DNS
const zone = new Map<string, dnsPacket.Answer[]>()
for (const d of spec.domains) {
  zone.set(d.name, [{ type: 'MX', name: d.name, ttl: 3600, data: { preference: 10, exchange: d.mx_host } } as dnsPacket.Answer])
  zone.set(d.mx_host, [{ type: 'A', name: d.mx_host, ttl: 3600, data: d.mx_ip }])
}
const udp = createSocket('udp4')
udp.on('message', (msg, rinfo) => {
  let q: dnsPacket.Packet
  try {
    q = dnsPacket.decode(msg)
  } catch {
    return
  }
  const question = q.questions?.[0]
  if (!question) return
  const name = question.name.toLowerCase()
  const known = zone.get(name)
  udp.send(
    dnsPacket.encode({
      id: q.id,
      type: 'response',
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (known ? 0 : 3),
      questions: [question],
      answers: (known ?? []).filter(a => a.type === question.type)
    }),
    rinfo.port,
    rinfo.address
  )
})
await new Promise<void>(resolve => udp.bind(0, spec.dns_ip, resolve))

// SMTP
const counters = { sessions: 0, refused_421: 0, rcpts: 0 }
for (const d of spec.domains) {
  let active = 0
  const firstSeen = new Map<string, number>()
  const server = createServer((socket: Socket) => {
    counters.sessions++
    socket.on('error', () => {})
    if (active >= spec.max_sessions) {
      counters.refused_421++
      socket.end('421 4.7.0 Too many concurrent SMTP connections; try again later\r\n')
      return
    }
    active++
    let closed = false
    socket.on('close', () => {
      active--
      closed = true
    })
    const send = (text: string, delay: number, then?: () => void): Promise<void> =>
      new Promise(resolve =>
        setTimeout(() => {
          if (!closed) socket.write(text)
          then?.()
          resolve()
        }, delay)
      )
    let queue = send(`220 ${d.mx_host} ESMTP simulated\r\n`, bannerMs)
    let buffer = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      buffer += chunk
      let nl: number
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, '')
        buffer = buffer.slice(nl + 1)
        queue = queue.then(() => answer(line))
      }
    })
    const answer = (line: string): Promise<void> => {
      const verb = line.slice(0, 4).toUpperCase()
      if (verb === 'EHLO') return send(`250-${d.mx_host}\r\n250-PIPELINING\r\n250 8BITMIME\r\n`, replyMs)
      if (verb === 'HELO' || verb === 'MAIL' || verb === 'RSET' || verb === 'NOOP') return send('250 2.0.0 OK\r\n', replyMs)
      if (verb === 'QUIT') return send('221 2.0.0 Bye\r\n', replyMs, () => socket.end())
      if (verb === 'RCPT') {
        counters.rcpts++
        const address = (/<([^>]*)>/.exec(line)?.[1] ?? '').toLowerCase()
        const local = address.slice(0, address.lastIndexOf('@'))
        if (d.kind === 'greylist') {
          const seen = firstSeen.get(address)
          if (seen === undefined) firstSeen.set(address, Date.now())
          if (seen === undefined || Date.now() - seen < spec.greylist_ms) return send('450 4.2.0 Greylisted, please try again later\r\n', replyMs)
        }
        if (d.kind === 'catch_all') return send('250 2.1.5 OK\r\n', replyMs)
        const box = d.mailboxes[local]
        if (box === 'exists') return send('250 2.1.5 OK\r\n', replyMs)
        if (box === 'full') return send('552 5.2.2 Mailbox full\r\n', replyMs)
        return send('550 5.1.1 User unknown\r\n', replyMs)
      }
      return send('502 5.5.2 Command not recognized\r\n', replyMs)
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(25, d.mx_ip, resolve)
  })
}

process.on('disconnect', () => process.exit(0))
process.on('SIGTERM', () => process.exit(0))
process.on('message', (m: unknown) => {
  if (m === 'counters') process.send?.({ counters })
})
process.stdout.write(`ready ${spec.dns_ip}:${udp.address().port}\n`)
