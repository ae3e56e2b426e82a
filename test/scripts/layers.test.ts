// The layer rules refuse what they say they refuse: `scripts/layers.ts` run over small
// trees written here, each breaking (or keeping) one rule. The oracle is the exit status and
// the rule's name in the output, against a tree whose imports are known by construction.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

const script = new URL('../../scripts/layers.ts', import.meta.url).pathname

/** Runs the layer rules over a tree of `files` (path → source): exit status and output. */
function layersOver(files: Record<string, string>): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'layers-'))
  try {
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { allowImportingTsExtensions: true, noEmit: true, module: 'nodenext' } }))
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true })
      writeFileSync(join(dir, path), text)
    }
    const r = spawnSync(process.execPath, [script, dir], { encoding: 'utf8', timeout: 60_000 })
    return { status: r.status, output: `${r.stdout}${r.stderr}` }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const wallet = {
  'src/commands/wallet/aggregate.ts': 'export const wallets = { handle: () => 1 }\n',
  'src/commands/wallet/read.ts': "import { wallets } from './aggregate.ts'\nexport const readWallet = () => wallets\n"
}

t.test("an aggregate's command importing another aggregate's commands is refused", async t => {
  const r = layersOver({
    ...wallet,
    'src/commands/job/submit-job.ts': "import { wallets } from '../wallet/aggregate.ts'\nexport const submit = () => wallets.handle()\n"
  })
  t.equal(r.status, 1, 'the rules fail')
  t.match(r.output, /aggregates-read-each-other-only/, 'naming the rule')
  t.match(r.output, /src\/commands\/job\/submit-job\.ts/, 'and the importing file')
})

t.test('reading another aggregate through its read.ts, and a flow using both, are allowed', async t => {
  const r = layersOver({
    ...wallet,
    'src/commands/job/queue-job.ts': "import { readWallet } from '../wallet/read.ts'\nexport const queue = () => readWallet()\n",
    'src/flows/submission/submit-job.ts':
      "import { wallets } from '../../commands/wallet/aggregate.ts'\nimport { queue } from '../../commands/job/queue-job.ts'\nexport const submit = () => [wallets.handle(), queue()]\n"
  })
  t.equal(r.status, 0, r.output)
})

t.test('a command importing a flow is refused', async t => {
  const r = layersOver({
    ...wallet,
    'src/flows/submission/submit-job.ts': "import { wallets } from '../../commands/wallet/aggregate.ts'\nexport const submit = () => wallets.handle()\n",
    'src/commands/job/queue-job.ts': "import { submit } from '../../flows/submission/submit-job.ts'\nexport const queue = () => submit()\n"
  })
  t.equal(r.status, 1, 'the rules fail')
  t.match(r.output, /commands-never-start-flows/, 'naming the rule')
})
