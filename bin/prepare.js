#!/usr/bin/env node
// `npm install`'s `prepare` script: the Node.js version first, in one message (with an older
// Node.js the TypeScript build would fail with ERR_UNKNOWN_FILE_EXTENSION ".ts"), then the
// build (scripts/build.ts).
import { tooOld } from './node-version.js'

const message = tooOld(process.versions.node, 'install and build the service')
if (message !== null) {
  process.stderr.write(message)
  process.exit(1)
}
await import('../scripts/build.ts')
