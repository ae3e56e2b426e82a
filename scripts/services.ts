// Before the suite (`npm test`): the outside services some tests need, checked once, each
// missing one said in one line with how to start it. Nothing fails here: without NATS or
// PostgreSQL their suites are counted as skipped (with REQUIRE_NATS=1 / REQUIRE_POSTGRES=1,
// as in CI, they fail instead); so is the real-server suite without the mail servers
// (scripts/install-mail-servers.sh; REQUIRE_MAIL_SERVERS=1 in CI).
import { natsAnswers } from '../src/infra/bus/nats.ts'
import { POSTGRES_URL, postgresAnswers } from '../test/support/postgres.ts'
import { mailLabMissing } from '../test/support/mail-lab.ts'

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

const mail = mailLabMissing()
if (mail) {
  const required = process.env.REQUIRE_MAIL_SERVERS === '1' ? 'REQUIRE_MAIL_SERVERS=1: it will fail' : 'it will be skipped'
  process.stderr.write(`services: the real mail servers cannot run (${mail}); the engine's real-server suite needs them (${required}).\n`)
}
