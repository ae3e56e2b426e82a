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
const STORES = ['kurrentdb', 'mongo', 'nats']
const ROLES = ['api', 'projector', 'relay', 'verifier', 'webhooks', 'mailer']

t.test('the stores publish no port and sit only on internal networks', async t => {
  for (const name of STORES) {
    const s = compose.services[name]
    t.notOk(s.ports, `${name}: no published port`)
    t.ok(s.networks && s.networks.length > 0, `${name}: on a named network`)
    for (const n of s.networks ?? []) t.equal(compose.networks[n]?.internal, true, `${name}: ${n} is internal`)
  }
  t.same(
    ROLES.filter(r => compose.services[r].ports),
    ['api'],
    'only the API publishes a port'
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
  t.ok(compose.services.nats.command!.includes('--pass'), 'NATS requires the password')
  t.match(JSON.stringify(compose.services.mongo), /--keyFile/, 'MongoDB runs with a replica-set key file (authorization on)')
  t.notMatch(JSON.stringify(compose.services.kurrentdb), /INSECURE/, 'KurrentDB is not in insecure mode')
})

t.test('health checks wait for what the service needs: a writable primary, a leader, JetStream', async t => {
  const check = (name: string): string => compose.services[name].healthcheck?.test.slice(1).join(' ') ?? ''
  // mongosh exits 0 whatever --eval's last expression is: the check must quit with a status.
  t.match(check('mongo'), /quit\(db\.hello\(\)\.isWritablePrimary \? 0 : 1\)/)
  t.match(check('kurrentdb'), /\/gossip.*Leader/)
  t.match(check('nats'), /healthz\?js-enabled-only=true/)
  for (const role of ROLES) {
    const deps = compose.services[role].depends_on ?? {}
    for (const store of STORES) t.equal(deps[store]?.condition, 'service_healthy', `${role} waits for ${store} to be healthy`)
  }
})
