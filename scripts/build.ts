// The build, run by `npm install` (the `prepare` script) and before the tests:
// 1. the TypeScript client of the public API, generated from the OpenAPI document the
//    routes declare (openapi-typescript, from the tools/client-gen workspace), into
//    src/client/generated/ (never edited by hand, never committed). `tsc` then checks every
//    use of it (the CLI's `verify-file`, the console), so a route change that breaks
//    clients breaks the build;
// 2. the customer console (web/, React built by Vite) into web/dist, with a Brotli and a
//    gzip copy of every text file beside it (the service sends the one a browser takes);
// 3. `svc` linked in node_modules/.bin: `npx svc …` in the checkout runs this checkout's
//    command at once. (A `bin` in package.json would make npx install the checkout itself
//    into its cache first — running this build again — and two first calls at once collide
//    there; the service is not a published package, so the link is made here instead.)
import { execFileSync } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
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

const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js')
execFileSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: join(root, 'web'), stdio: ['ignore', 'ignore', 'inherit'] })
const dist = join(root, 'web', 'dist')
let sent = 0
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !/\.(js|css|html|svg|json|txt)$/.test(entry.name)) continue
  const file = join(entry.parentPath, entry.name)
  const body = readFileSync(file)
  const br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } })
  writeFileSync(`${file}.br`, br)
  writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }))
  sent += 1
}
process.stderr.write(`build: the console in ${join('web', 'dist')} (${sent} files, each with .br and .gz copies)\n`)

const bins = join(root, 'node_modules', '.bin')
if (existsSync(join(root, 'node_modules'))) {
  mkdirSync(bins, { recursive: true })
  const link = join(bins, 'svc')
  try {
    if (lstatSync(link)) rmSync(link)
  } catch {}
  symlinkSync(join('..', '..', 'bin', 'svc.js'), link)
}
