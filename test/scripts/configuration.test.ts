// docs/configuration.md names every variable the configuration schema reads, with the
// default the schema itself gives when the variable is unset.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigSchema } from '../../src/config.ts'
import { CONFIG_DOCS } from '../../src/config-docs.ts'
import { configurationMarkdown, describeVariable, undocumented } from '../../scripts/configuration.ts'

const root = new URL('../..', import.meta.url).pathname

t.test('every variable of the schema has one row, and the file is what the schema gives', async t => {
  t.same(undocumented(), { missing: [], twice: [], unknown: [] }, 'each variable in exactly one row, none unknown')
  t.equal(
    readFileSync(join(root, 'docs', 'configuration.md'), 'utf8'),
    configurationMarkdown(),
    'docs/configuration.md is up to date (node scripts/configuration.ts)'
  )
})

t.test('a variable left out, named twice or unknown is reported', async t => {
  const [first, second, ...rest] = CONFIG_DOCS
  t.same(undocumented([second, second, ...rest, { variables: ['NO_SUCH_VARIABLE'], meaning: 'x' }]), {
    missing: [...first.variables],
    twice: [...second.variables],
    unknown: ['NO_SUCH_VARIABLE']
  })
})

t.test('the defaults shown are the ones the schema applies to an empty environment', async t => {
  // The oracle is zod's own parse of an empty environment, not the walk over the schema that renders the table.
  const parsed = ConfigSchema.parse({}) as Record<string, unknown>
  let withDefault = 0
  for (const name of Object.keys(ConfigSchema.shape)) {
    const shown = describeVariable(name).default
    if (shown === null) continue
    withDefault++
    t.equal(shown, String(parsed[name]), `${name}: ${shown}`)
  }
  t.ok(withDefault >= 50, `${withDefault} variables have a default`)
})
