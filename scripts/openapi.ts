// Writes the OpenAPI document the routes declare (what `GET /openapi.json` serves), without
// listening: `node scripts/openapi.ts [--out <file>]` (stdout without --out). The generated
// TypeScript client (`npm run client`) and the lint of the document are built from it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { pino } from 'pino'
import { loadConfig } from '../src/config.ts'
import { startService } from '../src/main.ts'

/** The document the routes declare, built on a throwaway data directory (nothing listens for long). */
export async function openapiDocument(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-openapi-'))
  try {
    const service = await startService(
      loadConfig({
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'silent',
        SIGNUP_SCREENING: 'lists',
        VERIFIER_EGRESS_TEST_INTERVAL_S: '0',
        PUBLIC_URL: 'http://127.0.0.1:8080'
      }),
      { logger: pino({ level: 'silent' }) }
    )
    const document = service.app.swagger() as unknown as Record<string, unknown>
    await service.close()
    return document
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string' } } })
  const text = `${JSON.stringify(await openapiDocument(), null, 2)}\n`
  if (values.out) writeFileSync(values.out, text)
  else process.stdout.write(text)
}
