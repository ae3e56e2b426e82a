// The build, run by `npm install` (the `prepare` script) and before the tests: the
// TypeScript client of the public API, generated from the OpenAPI document the routes
// declare (openapi-typescript, from the tools/client-gen workspace), into
// src/client/generated/ (never edited by hand, never committed). `tsc` then checks every
// use of it (the CLI's `verify-file`, the console), so a route change that breaks clients
// breaks the build.
import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openapiDocument } from './openapi.ts'

const root = new URL('..', import.meta.url).pathname
const out = join(root, 'src', 'client', 'generated')
mkdirSync(out, { recursive: true })
const document = join(out, 'openapi.json')
writeFileSync(document, `${JSON.stringify(await openapiDocument(), null, 2)}\n`)
const cli = join(root, 'tools', 'client-gen', 'node_modules', 'openapi-typescript', 'bin', 'cli.js')
execFileSync(process.execPath, [cli, document, '--output', join(out, 'schema.d.ts'), '--root-types'], { stdio: ['ignore', 'ignore', 'inherit'] })
rmSync(document)
process.stderr.write(`build: the API client's types in ${join('src', 'client', 'generated', 'schema.d.ts')}\n`)
