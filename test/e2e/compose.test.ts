// docker-compose.yml read as Docker Compose reads it (YAML), against the rules the security
// and production-adapter issues set: the stores only on an internal network, each asking
// for credentials, the roles started only once each store is healthy in the sense that
// matters (a writable primary, a leader, JetStream up). No Docker here: the file is
// checked, not run (the note says so).
import t from 'tap'
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'

interface Service {
  image?: string
  profiles?: string[]
  command?: string[]
  ports?: string[]
  networks?: string[]
  environment?: Record<string, string>
  depends_on?: Record<string, { condition: string }>
  healthcheck?: { test: string[] }
}
const compose = parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8'), { merge: true }) as {
  services: Record<string, Service>
  networks: Record<string, { internal?: boolean } | null>
}
/** The two topologies (COMPOSE_PROFILES): their stores and their roles. */
const PROFILES = {
  kurrent: { stores: ['kurrentdb', 'mongo', 'nats'], roles: ['api', 'projector', 'relay', 'verifier', 'webhooks', 'mailer'] },
  postgres: { stores: ['postgres', 'nats'], roles: ['pg-api', 'pg-projector', 'pg-relay', 'pg-verifier', 'pg-webhooks', 'pg-mailer'] }
}
const STORES = ['kurrentdb', 'mongo', 'postgres', 'nats']
const ROLES = [...PROFILES.kurrent.roles, ...PROFILES.postgres.roles]

t.test('the stores publish no port and sit only on internal networks', async t => {
  for (const name of STORES) {
    const s = compose.services[name]
    t.notOk(s.ports, `${name}: no published port`)
    t.ok(s.networks && s.networks.length > 0, `${name}: on a named network`)
    for (const n of s.networks ?? []) t.equal(compose.networks[n]?.internal, true, `${name}: ${n} is internal`)
  }
  t.same(
    ROLES.filter(r => compose.services[r].ports),
    ['api', 'pg-api'],
    'only the API (of either profile) publishes a port'
  )
})

t.test('every store asks for credentials, and the roles pass them', async t => {
  const env = compose.services.api.environment!
  t.match(
    env.EVENTSTORE_URL,
    /^kurrentdb:\/\/admin:\$\{KURRENTDB_ADMIN_PASSWORD[^}]*\}@kurrentdb:2113\?tls=true/,
    'KurrentDB over TLS with a password, in the current scheme'
  )
  t.match(env.MONGODB_URL, /^mongodb:\/\/svc:\$\{MONGO_PASSWORD[^}]*\}@mongo:27017\/.*replicaSet=rs0/, 'MongoDB with a user, a replica set')
  t.match(env.NATS_URL, /^nats:\/\/svc:\$\{NATS_PASSWORD[^}]*\}@nats:4222/, 'NATS with a user')
  const pg = compose.services['pg-api'].environment!
  t.match(pg.DATABASE_URL, /^postgres:\/\/svc:\$\{POSTGRES_PASSWORD[^}]*\}@postgres:5432\/verification$/, 'PostgreSQL with a user and password')
  t.match(compose.services.postgres.environment!.POSTGRES_PASSWORD, /^\$\{POSTGRES_PASSWORD:\?/, 'the server refuses to start without one')
  t.equal(pg.NATS_URL, env.NATS_URL, 'the same NATS for both profiles')
  t.ok(compose.services.nats.command!.includes('--pass'), 'NATS requires the password')
  t.match(JSON.stringify(compose.services.mongo), /--keyFile/, 'MongoDB runs with a replica-set key file (authorization on)')
  t.notMatch(JSON.stringify(compose.services.kurrentdb), /INSECURE/, 'KurrentDB is not in insecure mode')
  // A batch chunk is one append: a Business plan's largest (about 6.4 MB) over the server's default 1 MiB.
  t.ok(Number(compose.services.kurrentdb.environment!.KURRENTDB_MAX_APPEND_SIZE) >= 8 * 1024 * 1024, 'KurrentDB takes appends of 8 MiB')
})

t.test('health checks wait for what the service needs: a writable primary, a leader, JetStream', async t => {
  const check = (name: string): string => compose.services[name].healthcheck?.test.slice(1).join(' ') ?? ''
  // mongosh exits 0 whatever --eval's last expression is: the check must quit with a status.
  t.match(check('mongo'), /quit\(db\.hello\(\)\.isWritablePrimary \? 0 : 1\)/)
  t.match(check('kurrentdb'), /\/gossip.*Leader/)
  t.match(check('nats'), /healthz\?js-enabled-only=true/)
  t.match(check('postgres'), /pg_isready -U svc -d verification/)
  for (const [profile, { stores, roles }] of Object.entries(PROFILES))
    for (const role of roles) {
      const deps = compose.services[role].depends_on ?? {}
      for (const store of stores) t.equal(deps[store]?.condition, 'service_healthy', `${role} waits for ${store} to be healthy`)
      t.same(compose.services[role].profiles, [profile], `${role} runs in the ${profile} profile only`)
    }
})

t.test('the postgres profile migrates the schema once before the roles start', async t => {
  t.same(compose.services['pg-migrate'].command, ['db', 'migrate'])
  t.equal(compose.services['pg-migrate'].depends_on?.postgres?.condition, 'service_healthy')
  for (const role of PROFILES.postgres.roles)
    t.equal(compose.services[role].depends_on?.['pg-migrate']?.condition, 'service_completed_successfully', `${role} starts after the migration`)
  for (const store of ['kurrentdb', 'mongo', 'kurrentdb-certs']) t.same(compose.services[store].profiles, ['kurrent'], `${store}: kurrent only`)
  t.same(compose.services.postgres.profiles, ['postgres'])
  t.notOk(compose.services.nats.profiles, 'NATS: both')
})

t.test('.env.example names every password the file asks for, and picks the profile run live', async t => {
  const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8')
  const asked = new Set([...readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8').matchAll(/\$\{([A-Z_]+):\?/g)].map(m => m[1]))
  for (const name of asked) t.match(example, new RegExp(`^${name}=`, 'm'), `${name} in .env.example`)
  t.match(example, /^COMPOSE_PROFILES=postgres$/m)
})
