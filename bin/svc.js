#!/usr/bin/env node
// The `svc` command (and what `npm start` runs). This file is plain JavaScript that any
// Node.js version runs: it checks the version before any TypeScript is loaded, since the
// service is TypeScript run by Node's type stripping (Node.js 24 or newer).
import { tooOld } from './node-version.js'

const message = tooOld(process.versions.node, 'run svc')
if (message !== null) {
  process.stderr.write(message)
  process.exit(1)
}
// V8's compiled code of the modules, kept between runs (in the OS's temporary directory; a
// changed file is compiled again): an operator command starts in about half the time.
const { enableCompileCache } = await import('node:module')
enableCompileCache?.()
await import('../src/cli.ts')
