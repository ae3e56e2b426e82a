// The NATS server the tests use (NATS_URL, default the local one with JetStream).
import type { Test } from 'tap'
import { natsAnswers } from '../../src/infra/bus/nats.ts'

/** The server the bus and topology tests use. */
export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222'

/**
 * A test file that needs NATS: true when it answers; otherwise the file plans 0 with the
 * reason (counted as skipped), or fails when REQUIRE_NATS=1 (CI: the production topology's
 * tests never pass by skipping).
 */
export async function requireNats(t: Test): Promise<boolean> {
  if (await natsAnswers(NATS_URL)) return true
  if (process.env.REQUIRE_NATS === '1') t.fail(`no NATS server answers at ${NATS_URL}, and REQUIRE_NATS=1`)
  else t.plan(0, `no NATS server answers at ${NATS_URL} (set NATS_URL; .ci/run starts one)`)
  return false
}
