// Private PostgreSQL servers for the tests that stop, kill or fail over their database, made
// with Debian's own binaries (`initdb`, `pg_ctl`, `pg_basebackup`) in a directory of the test's
// own, on a loopback port of its own. As root they run as the `postgres` user (initdb refuses
// root); as anyone else, as that user.
import { execFile, execFileSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, appendFileSync, writeFileSync } from 'node:fs'
import { createServer, connect, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import type { Test } from 'tap'

const run = promisify(execFile)

/** The newest PostgreSQL of Debian's `/usr/lib/postgresql/<major>/bin`, or null when none is installed. */
function postgresBin(): string | null {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return null
  const majors = readdirSync(root)
    .filter(d => /^\d+$/.test(d) && existsSync(join(root, d, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))
  return majors.length > 0 ? join(root, majors[0], 'bin') : null
}

const asRoot = process.getuid?.() === 0

/** As root: the uid and gid of the `postgres` user the servers run as. */
function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}

/** Runs one of the server's binaries as the user that owns the cluster. */
async function pgRun(bin: string, args: string[]): Promise<string> {
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args]
  const { stdout } = await run(cmd, argv, { timeout: 120_000 })
  return stdout
}

/** A private server: its port, its data directory, its URL, and what a test does to it. */
export interface PgServer {
  port: number
  dir: string
  /** The URL of `database` on this server (user `postgres`, trust auth on loopback). */
  url(database?: string): string
  /** `pg_ctl start`, returning once it accepts connections. */
  start(): Promise<void>
  /** `pg_ctl stop -m fast` (sessions ended, a clean shutdown) or `immediate` (as a crash: no checkpoint, recovery at the next start). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>
  /** `pg_ctl promote` (a standby becomes a primary), returning once it accepts writes. */
  promote(): Promise<void>
}

/** A directory the cluster's user may write, removed at the end of `t`. */
function clusterDir(t: Test, name: string): string {
  const base = mkdtempSync(join(tmpdir(), `svc-pg-${name}-`))
  if (asRoot) chownSync(base, postgresUser().uid, postgresUser().gid)
  t.teardown(() => rmSync(base, { recursive: true, force: true }))
  return base
}

function serverAt(bin: string, dir: string, port: number, t: Test): PgServer {
  let running = false
  const server: PgServer = {
    port,
    dir,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    start: async () => {
      await pgRun(join(bin, 'pg_ctl'), ['start', '-w', '-t', '60', '-D', dir, '-l', join(dir, 'server.log'), '-s'])
      running = true
    },
    stop: async (mode = 'fast') => {
      if (!running) return
      await pgRun(join(bin, 'pg_ctl'), ['stop', '-w', '-t', '60', '-m', mode, '-D', dir, '-s'])
      running = false
    },
    promote: async () => {
      await pgRun(join(bin, 'pg_ctl'), ['promote', '-w', '-t', '60', '-D', dir, '-s'])
    }
  }
  t.teardown(() => server.stop('immediate').catch(() => undefined))
  return server
}

/** A loopback port free now (the server takes it a moment later). */
async function freePort(): Promise<number> {
  const s = createServer()
  await new Promise<void>(resolve => s.listen(0, '127.0.0.1', resolve))
  const port = (s.address() as { port: number }).port
  await new Promise(resolve => s.close(resolve))
  return port
}

/** Settings of a small, quick test server listening on 127.0.0.1:`port` only, its socket beside its data directory `dir`. */
function settings(dir: string, port: number, extra: string[] = []): string {
  return [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${dirname(dir)}'`,
    'shared_buffers = 32MB',
    'max_connections = 60',
    'wal_level = replica',
    'max_wal_senders = 4',
    'wal_keep_size = 64MB',
    'hot_standby = on',
    ...extra,
    ''
  ].join('\n')
}

/**
 * Makes and starts a primary on a free loopback port (`initdb`, trust auth on loopback, replication
 * allowed). `synchronous_standby` names the standby whose flush each commit waits for
 * (`synchronous_standby_names`, `synchronous_commit = on`): no commit is acknowledged
 * before the standby has it on disk.
 */
export async function startPrimary(t: Test, options: { synchronous_standby?: string } = {}): Promise<PgServer> {
  const port = await freePort()
  const bin = postgresBin()
  if (!bin) throw new Error('no PostgreSQL binaries in /usr/lib/postgresql/*/bin (apt-get install postgresql)')
  const dir = join(clusterDir(t, 'primary'), 'data')
  await pgRun(join(bin, 'initdb'), ['-D', dir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'])
  const sync = options.synchronous_standby ? [`synchronous_standby_names = '${options.synchronous_standby}'`, 'synchronous_commit = on'] : []
  appendFileSync(join(dir, 'postgresql.conf'), settings(dir, port, sync))
  // initdb's pg_hba.conf already trusts replication connections from 127.0.0.1 (with --auth=trust).
  const server = serverAt(bin, dir, port, t)
  await server.start()
  return server
}

/**
 * Makes a streaming standby of `primary` on a free loopback port (`pg_basebackup -R`, connecting as
 * `name`, the application name the primary's `synchronous_standby_names` waits for) and
 * starts it; resolves once it accepts (read-only) connections.
 */
export async function startStandby(t: Test, primary: PgServer, name: string): Promise<PgServer> {
  const port = await freePort()
  const bin = postgresBin()!
  const dir = join(clusterDir(t, 'standby'), 'data')
  await pgRun(join(bin, 'pg_basebackup'), ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', dir, '-X', 'stream', '-R', '--no-sync'])
  writeFileSync(join(dir, 'postgresql.auto.conf'), `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres application_name=${name}'\n`)
  // The primary's settings came with the base backup; once promoted, this server has no standby of its own
  // to wait for (a failover tool attaches a new one and names it here).
  appendFileSync(join(dir, 'postgresql.conf'), settings(dir, port, ["synchronous_standby_names = ''"]))
  const server = serverAt(bin, dir, port, t)
  await server.start()
  return server
}

/** Why this machine cannot run a private server (no Debian binaries; as root, no `postgres` user to run them as), or null when it can. */
export function cannotRunPrivatePostgres(): string | null {
  if (!postgresBin()) return 'no PostgreSQL binaries in /usr/lib/postgresql/*/bin'
  if (asRoot) {
    try {
      postgresUser()
    } catch {
      return 'running as root, and no postgres user to run initdb as'
    }
  }
  return null
}

/**
 * A TCP forwarder on 127.0.0.1 standing for the address a deployment gives its database (a
 * virtual IP, a DNS name, a proxy such as HAProxy checking `pg_is_in_recovery()`): the
 * service connects to it, and a failover `retarget`s it, ending the connections it carried.
 */
export async function startForwarder(t: Test, targetPort: number): Promise<{ port: number; retarget(port: number): void }> {
  let target = targetPort
  const open = new Set<Socket>()
  const server: Server = createServer(client => {
    const upstream = connect(target, '127.0.0.1')
    open.add(client)
    open.add(upstream)
    const end = (): void => {
      client.destroy()
      upstream.destroy()
      open.delete(client)
      open.delete(upstream)
    }
    client.on('error', end).on('close', end)
    upstream.on('error', end).on('close', end)
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const s of open) s.destroy()
    server.close()
  })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('forwarder: no port')
  return {
    port: address.port,
    retarget: port => {
      target = port
      for (const s of open) s.destroy()
      open.clear()
    }
  }
}
