// Real mail servers from Debian's packages (Postfix with postgrey, OpenSMTPD, NSD), each in a
// network namespace of the test's own, reached from this namespace over a veth pair: the
// engine's end-to-end suite (test/verifier/real-servers.test.ts). They listen on port 25 of
// their namespace's addresses, never on this machine's. `scripts/install-mail-servers.sh`
// installs them; the logs they write are the suite's oracle.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync, chownSync } from 'node:fs'
import { join } from 'node:path'
import type { Test } from 'tap'
import { canMakeNamespaces } from './netns.ts'

/** Where `scripts/install-mail-servers.sh` unpacks the servers that conflict with Postfix in apt. */
const PREFIX = '/opt/mail-servers'
const OPENSMTPD = `${PREFIX}/opensmtpd/usr/sbin/smtpd`
const EXIM = `${PREFIX}/exim4/usr/sbin/exim4`
const BINARIES = ['/usr/sbin/postfix', '/usr/sbin/postgrey', '/usr/sbin/nsd', OPENSMTPD, EXIM]

/**
 * Why the real servers cannot run here (null when they can): not root on Linux (network
 * namespaces), or a server not installed (`scripts/install-mail-servers.sh`).
 */
export function mailLabMissing(): string | null {
  if (!canMakeNamespaces()) return 'network namespaces need root on Linux'
  const missing = BINARIES.filter(b => !existsSync(b))
  if (missing.length > 0) return `not installed: ${missing.join(', ')} (run scripts/install-mail-servers.sh as root)`
  return null
}

/** A network namespace with `ips` addresses of its own on one /27 with ours (`host_ip`). */
export interface LabHost {
  name: string
  host_ip: string
  ips: string[]
  /** A directory of the test's own for this host's configuration, state and logs. */
  dir: string
}

const ip = (...args: string[]): void => {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] })
}

/**
 * A directory for the lab's servers, short enough for Postfix's UNIX sockets (108 bytes,
 * which a test's fixture directory can pass): under /tmp, removed at the test's teardown.
 */
export function labRoot(t: Test): string {
  const root = mkdtempSync('/tmp/mta-')
  chmodSync(root, 0o755)
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  return root
}

/**
 * Namespace `index` (0–7) of this process: `10.<200+pid/256%50>.<pid%256>.<32·index>/27`, our
 * end at `.1` of it, its addresses `.2` up (at most 29). Deleted, with its veth pair, at the
 * test's teardown (after the processes in it, which the starters' teardowns stop first).
 */
export function labHost(t: Test, index: number, count: number, root: string): LabHost {
  // `root`: from labRoot.
  const pid = process.pid
  const net = `10.${200 + ((pid >> 8) % 50)}.${pid & 255}`
  const base = 32 * index
  const name = `svc-mta-${pid}-${index}`
  const hostEnd = `vmh${pid % 100_000}${index}`
  const nsEnd = `vmn${pid % 100_000}${index}`
  const hostIp = `${net}.${base + 1}`
  const ips = Array.from({ length: count }, (_, i) => `${net}.${base + 2 + i}`)
  ip('netns', 'add', name)
  t.teardown(() => ip('netns', 'del', name))
  ip('link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', nsEnd)
  ip('link', 'set', nsEnd, 'netns', name)
  ip('addr', 'add', `${hostIp}/27`, 'dev', hostEnd)
  ip('link', 'set', hostEnd, 'up')
  for (const a of ips) ip('netns', 'exec', name, 'ip', 'addr', 'add', `${a}/27`, 'dev', nsEnd)
  ip('netns', 'exec', name, 'ip', 'link', 'set', nsEnd, 'up')
  ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up')
  const dir = join(root, name)
  mkdirSync(dir, { mode: 0o755 })
  return { name, host_ip: hostIp, ips, dir }
}

/** A server process in a namespace: its output so far, and how to stop it (also at teardown). */
interface Running {
  child: ChildProcess
  output: () => string
}

function run(t: Test, host: LabHost, command: string[], stop?: () => void): Running {
  const child = spawn('ip', ['netns', 'exec', host.name, ...command], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()))
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()))
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const gone = new Promise<void>(resolve => child.once('exit', () => resolve()))
    if (stop) {
      try {
        stop()
      } catch {
        child.kill('SIGTERM')
      }
    } else child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
    await gone
    clearTimeout(timer)
  })
  return { child, output: () => out }
}

async function until(what: string, ok: () => boolean | Promise<boolean>, output: () => string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`${what} did not start within ${ms} ms: ${output().slice(-800)}`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

const readOr = (file: string): string => {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return ''
  }
}

/** Whether a socket in `host` listens on `address`:`port` (asked of the kernel with `ss`: no connection the server would log). */
const listening = (host: LabHost, address: string, port: number): boolean =>
  execFileSync('ip', ['netns', 'exec', host.name, 'ss', '-Hltn', `src ${address}:${port}`])
    .toString()
    .trim() !== ''

/** An authoritative zone: its origin and its records in zone-file syntax, relative to it. */
export interface Zone {
  origin: string
  records: string[]
}

/**
 * NSD, authoritative for `zones`, on port 53 of `host.ips[0]` (no recursion: every name the
 * suite asks about is in one of them, and a name under a zone that is not there is NXDOMAIN).
 * @returns the address for `VERIFIER_DNS_SERVERS` (`ip:53`).
 */
export async function startNsd(t: Test, host: LabHost, zones: Zone[]): Promise<string> {
  const dir = join(host.dir, 'nsd')
  mkdirSync(dir, { recursive: true })
  const conf = [
    'server:',
    `  ip-address: ${host.ips[0]}`,
    '  port: 53',
    '  username: ""',
    '  chroot: ""',
    `  zonesdir: "${dir}"`,
    `  pidfile: "${dir}/nsd.pid"`,
    '  database: ""',
    `  xfrdfile: "${dir}/xfrd.state"`,
    `  zonelistfile: "${dir}/zone.list"`,
    `  logfile: "${dir}/nsd.log"`,
    '  verbosity: 2',
    '  server-count: 1',
    '  hide-version: yes',
    'remote-control:',
    '  control-enable: no',
    ...zones.flatMap(z => ['zone:', `  name: "${z.origin}"`, `  zonefile: "${z.origin}.zone"`])
  ]
  writeFileSync(join(dir, 'nsd.conf'), `${conf.join('\n')}\n`)
  for (const z of zones) {
    const soa = `@ IN SOA ns.${z.origin}. hostmaster.${z.origin}. 1 3600 600 86400 60`
    writeFileSync(
      join(dir, `${z.origin}.zone`),
      [`$ORIGIN ${z.origin}.`, '$TTL 300', soa, `@ IN NS ns.${z.origin}.`, `ns IN A ${host.ips[0]}`, ...z.records, ''].join('\n')
    )
  }
  const p = run(t, host, ['/usr/sbin/nsd', '-d', '-c', join(dir, 'nsd.conf')])
  const log = (): string => p.output() + readOr(join(dir, 'nsd.log'))
  await until('nsd', () => /nsd started/.test(log()), log)
  if (/error/i.test(log())) throw new Error(`nsd: ${log()}`)
  return `${host.ips[0]}:53`
}

/** One `smtpd` listener of a Postfix instance: its address and its `-o name=value` overrides. */
interface PostfixListener {
  ip: string
  options?: Record<string, string>
}

export interface PostfixSetup {
  hostname: string
  listeners: PostfixListener[]
  /** main.cf settings over the defaults below. */
  main?: Record<string, string>
  /** The virtual mailbox domains and the addresses that exist in them. */
  virtual_domains: string[]
  mailboxes: string[]
  /** virtual_alias_maps lines (`@domain target` is a catch-all). */
  aliases?: Array<[string, string]>
  /** check_recipient_access lines (`address REJECT 5.7.1 …`: a policy refusal). */
  access?: Array<[string, string]>
}

/** A Postfix instance: its own log (`maillog_file`, written by postlogd). */
export interface Postfix {
  log: () => string
}

const MASTER_SERVICES = [
  'pickup unix n - n 60 1 pickup',
  'cleanup unix n - n - 0 cleanup',
  'qmgr unix n - n 300 1 qmgr',
  'rewrite unix - - n - - trivial-rewrite',
  'bounce unix - - n - 0 bounce',
  'defer unix - - n - 0 bounce',
  'trace unix - - n - 0 bounce',
  'verify unix - - n - 1 verify',
  'flush unix n - n 1000? 0 flush',
  'proxymap unix - - n - - proxymap',
  'smtp unix - - n - - smtp',
  'relay unix - - n - - smtp',
  'showq unix n - n - - showq',
  'error unix - - n - - error',
  'retry unix - - n - - error',
  'discard unix - - n - - discard',
  'local unix - n n - - local',
  'virtual unix - n n - - virtual',
  'lmtp unix - - n - - lmtp',
  'anvil unix - - n - 1 anvil',
  'scache unix - - n - 1 scache',
  'postlog unix-dgram n - n - 1 postlogd'
]

/**
 * A Postfix instance of its own (`postfix -c <dir> start-fg`) in `host`: virtual mailboxes,
 * optional catch-all aliases and policy refusals, one `smtpd` per listener (each its own
 * anvil service, so its limits count on their own). Nothing is chrooted; the log is
 * `maillog_file` in the instance's directory.
 */
export async function startPostfix(t: Test, host: LabHost, o: PostfixSetup): Promise<Postfix> {
  const dir = join(host.dir, 'postfix')
  const conf = join(dir, 'conf')
  for (const d of [conf, join(dir, 'queue'), join(dir, 'data'), join(dir, 'vmail')]) mkdirSync(d, { recursive: true })
  const postfixUid = Number(execFileSync('id', ['-u', 'postfix']).toString())
  chownSync(join(dir, 'data'), postfixUid, 0)
  const maillog = join(dir, 'maillog')
  const main: Record<string, string> = {
    compatibility_level: '3.6',
    queue_directory: join(dir, 'queue'),
    data_directory: join(dir, 'data'),
    mail_owner: 'postfix',
    setgid_group: 'postdrop',
    myhostname: o.hostname,
    mydestination: '',
    mynetworks: '127.0.0.0/8',
    inet_protocols: 'ipv4',
    alias_maps: '',
    alias_database: '',
    maillog_file: maillog,
    maillog_file_prefixes: dir,
    virtual_mailbox_domains: o.virtual_domains.join(', '),
    virtual_mailbox_maps: `texthash:${conf}/vmailbox`,
    virtual_alias_maps: `texthash:${conf}/valias`,
    virtual_mailbox_base: join(dir, 'vmail'),
    smtputf8_enable: 'yes',
    smtpd_recipient_restrictions: `check_recipient_access texthash:${conf}/access, reject_unauth_destination`,
    ...o.main
  }
  writeFileSync(
    join(conf, 'main.cf'),
    Object.entries(main)
      .map(([k, v]) => `${k} = ${v}\n`)
      .join('')
  )
  const listeners = o.listeners.map(l => [`${l.ip}:smtp inet n - n - - smtpd`, ...Object.entries(l.options ?? {}).map(([k, v]) => `  -o ${k}=${v}`)].join('\n'))
  writeFileSync(join(conf, 'master.cf'), `${[...listeners, ...MASTER_SERVICES].join('\n')}\n`)
  writeFileSync(join(conf, 'vmailbox'), o.mailboxes.map(m => `${m} ${m.split('@')[1]}/${m.split('@')[0]}/\n`).join(''))
  writeFileSync(join(conf, 'valias'), (o.aliases ?? []).map(([k, v]) => `${k} ${v}\n`).join(''))
  writeFileSync(join(conf, 'access'), (o.access ?? []).map(([k, v]) => `${k} ${v}\n`).join(''))
  const p = run(t, host, ['/usr/sbin/postfix', '-c', conf, 'start-fg'], () =>
    execFileSync('ip', ['netns', 'exec', host.name, '/usr/sbin/postfix', '-c', conf, 'stop'], { stdio: 'ignore' })
  )
  const log = (): string => readOr(maillog)
  // The master has bound its listeners when it says it started.
  await until(
    'postfix',
    () => /daemon started/.test(log()),
    () => p.output() + log()
  )
  return { log }
}

/**
 * postgrey in `host` on 127.0.0.1:10023 (a Postfix there asks it with `check_policy_service
 * inet:127.0.0.1:10023`), greylisting each new (client network, sender, recipient) for
 * `delay_s` seconds, with its default reply text (no hint of the delay).
 */
export async function startPostgrey(t: Test, host: LabHost, delay_s: number): Promise<void> {
  const dir = join(host.dir, 'postgrey')
  mkdirSync(dir, { recursive: true })
  const uid = Number(execFileSync('id', ['-u', 'postgrey']).toString())
  chownSync(dir, uid, 0)
  const p = run(t, host, ['/usr/sbin/postgrey', '--inet=127.0.0.1:10023', `--dbdir=${dir}`, `--delay=${delay_s}`, '--user=postgrey', '--group=postgrey'])
  await until('postgrey', () => /Setting uid/.test(p.output()), p.output)
}

export interface OpenSmtpdSetup {
  hostname: string
  ip: string
  domains: string[]
  /** Virtual users (`address`), and `@domain` for a catch-all. */
  users: string[]
}

/**
 * OpenSMTPD (`smtpd -d`) in `host`, delivering `domains` to a virtual user table; its log is
 * what it prints in the foreground. Its spool and control socket are compiled in
 * (/var/spool/smtpd, /var/run/smtpd.sock): a private spool is bind-mounted over the one and
 * an empty /run over the other, in the mount namespace `ip netns exec` makes.
 */
export async function startOpenSmtpd(t: Test, host: LabHost, o: OpenSmtpdSetup): Promise<{ log: () => string }> {
  const dir = join(host.dir, 'opensmtpd')
  const spool = join(dir, 'spool')
  mkdirSync(spool, { recursive: true })
  chmodSync(spool, 0o711)
  writeFileSync(join(dir, 'domains'), o.domains.map(d => `${d}\n`).join(''))
  writeFileSync(join(dir, 'users'), o.users.map(u => `${u} nobody\n`).join(''))
  writeFileSync(
    join(dir, 'smtpd.conf'),
    [
      `table domains file:${dir}/domains`,
      `table users file:${dir}/users`,
      `listen on ${o.ip} hostname ${o.hostname}`,
      `action "deliver" maildir "${dir}/mail" virtual <users>`,
      'match from any for domain <domains> action "deliver"',
      ''
    ].join('\n')
  )
  const p = run(t, host, ['sh', '-c', `mount --bind '${spool}' /var/spool/smtpd && mount -t tmpfs lab-run /run && exec ${OPENSMTPD} -d -f '${dir}/smtpd.conf'`])
  await until('opensmtpd', () => listening(host, o.ip, 25), p.output)
  return { log: p.output }
}

export interface EximSetup {
  hostname: string
  ip: string
  /** The domain whose mailboxes are `users` (local parts), and domains that accept any local part. */
  domain: string
  users: string[]
  catch_all_domains: string[]
  /** `smtp_accept_max_per_host`: sessions at once from one client address. */
  max_per_host: number
}

/**
 * Exim (`exim4 -bdf`, Debian's exim4-daemon-light) in `host`, with the ACL of Debian's default
 * configuration (relay refused, then `require verify = recipient`: a local part not in
 * `users` is `550 Unrouteable address`), STARTTLS with its self-signed certificate, and its
 * main log in the instance's directory. Exim reads its configuration from the compiled-in
 * /etc/exim4/exim4.conf as root only when it is there (a `-C` file drops root unless listed
 * in /etc/exim4/trusted_configs): the instance's directory is bind-mounted over /etc/exim4 in
 * the mount namespace `ip netns exec` makes.
 */
export async function startExim(t: Test, host: LabHost, o: EximSetup): Promise<{ log: () => string }> {
  const dir = join(host.dir, 'exim')
  const conf = join(dir, 'conf')
  for (const d of [conf, join(dir, 'spool'), join(dir, 'log')]) mkdirSync(d, { recursive: true })
  const uid = Number(execFileSync('id', ['-u', 'Debian-exim']).toString())
  chownSync(join(dir, 'spool'), uid, 0)
  chownSync(join(dir, 'log'), uid, 0)
  writeFileSync(join(conf, 'users'), o.users.map(u => `${u}\n`).join(''))
  writeFileSync(
    join(conf, 'exim4.conf'),
    [
      `primary_hostname = ${o.hostname}`,
      `domainlist local_domains = ${[o.domain, ...o.catch_all_domains].join(' : ')}`,
      `local_interfaces = ${o.ip}`,
      'daemon_smtp_ports = 25',
      `spool_directory = ${dir}/spool`,
      `log_file_path = ${dir}/log/%slog`,
      'log_selector = +smtp_connection +smtp_no_mail',
      `smtp_accept_max_per_host = ${o.max_per_host}`,
      'smtputf8_advertise_hosts = *',
      'host_lookup =',
      'rfc1413_hosts =',
      'keep_environment =',
      'acl_smtp_rcpt = acl_check_rcpt',
      'begin acl',
      'acl_check_rcpt:',
      '  deny domains = !+local_domains',
      '       message = relay not permitted',
      '  require verify = recipient',
      '  accept',
      'begin routers',
      'catchall:',
      '  driver = redirect',
      `  domains = ${o.catch_all_domains.join(' : ')}`,
      `  data = postmaster@${o.domain}`,
      'postmaster:',
      '  driver = accept',
      `  domains = ${o.domain}`,
      '  local_parts = postmaster',
      '  transport = devnull',
      'users:',
      '  driver = accept',
      `  domains = ${o.domain}`,
      `  local_parts = lsearch;${conf}/users`,
      '  transport = devnull',
      'begin transports',
      'devnull:',
      '  driver = appendfile',
      '  file = /dev/null',
      '  user = Debian-exim',
      ''
    ].join('\n')
  )
  chmodSync(join(conf, 'exim4.conf'), 0o644)
  mkdirSync('/etc/exim4', { recursive: true })
  const p = run(t, host, ['sh', '-c', `mount --bind '${conf}' /etc/exim4 && exec ${EXIM} -bdf`])
  const log = (): string => readOr(join(dir, 'log', 'mainlog'))
  await until(
    'exim',
    () => /daemon started/.test(log()) && listening(host, o.ip, 25),
    () => p.output() + log()
  )
  return { log }
}
