// Before the suite (`npm test`): the outside services some tests need, checked once, each
// missing one said in one line with how to start it. Nothing fails here: without NATS or
// PostgreSQL their suites are counted as skipped (with REQUIRE_NATS=1 / REQUIRE_POSTGRES=1,
// as in CI, they fail instead).
import { natsAnswers } from '../src/infra/bus/nats.ts'
import { POSTGRES_URL, postgresAnswers } from '../test/support/postgres.ts'

const url = process.env.NATS_URL ?? 'nats://127.0.0.1:4222'
if (!(await natsAnswers(url))) {
  const required = process.env.REQUIRE_NATS === '1' ? 'REQUIRE_NATS=1: they will fail' : 'they will be skipped'
  process.stderr.write(
    `services: no NATS server answers at ${url}; the NATS bus suites need one (${required}). Start one: nats-server -js -a 127.0.0.1 -p 4222 (Debian: apt-get install nats-server), or set NATS_URL.\n`
  )
}

if (!(await postgresAnswers())) {
  const required = process.env.REQUIRE_POSTGRES === '1' ? 'REQUIRE_POSTGRES=1: they will fail' : 'they will be skipped'
  process.stderr.write(
    `services: no PostgreSQL answers at ${POSTGRES_URL}; the PostgreSQL suites need one (${required}). Start one: pg_ctlcluster 15 main start (Debian: apt-get install postgresql), or set POSTGRES_URL.\n`
  )
}
