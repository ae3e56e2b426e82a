import type { Command } from 'commander'
import { positiveInt, progressBar, usage } from './common.ts'

/** `svc verify-file`: a list file through the public API and back with its result columns (src/client/lists). */
export function registerVerifyFile(program: Command): void {
  program
    .command('verify-file')
    .description(
      'verify a list file (CSV, TSV, text, XLSX) through the public API and write it back with result columns: every row, in order, with its own columns; resumable'
    )
    .argument('<input>', 'the list: CSV or TSV (delimiter, quoting and header detected), text (one address a line) or XLSX (first sheet)')
    .option('--out <file>', 'the list with result columns, every row in input order (.csv, .tsv or .xlsx: by its name)')
    .option('--split <dir>', 'also one file per verdict in <dir> (valid, risky, invalid, unknown; unverified for empty, unparsable or pending rows)')
    .option('--only <verdicts>', 'only rows of these verdicts in --out (comma-separated: valid,risky,invalid,unknown)')
    .option('--column <name|n>', 'the column holding the addresses: its header name or its number from 1 (detected otherwise)')
    .option('--estimate', 'only say what the list costs against the balance; nothing is sent')
    .option('--partial', 'when the balance does not cover the list: verify what it covers now, mark the rest pending, say what it needs')
    .option('--resume', 'go on with the interrupted or partial run whose state is beside --out (or in --split)')
    .option('--force', "replace an existing --out or --split results (and an interrupted run's state)")
    .option('--api-url <url>', 'the service (default: SVC_API_URL, else http://127.0.0.1:8080)')
    .option('--api-key <key>', 'an API key with email:verify:bulk and results:read (default: SVC_API_KEY)')
    .option('--chunk-size <n>', "addresses per request (default and at most: the plan's max_chunk_size)", positiveInt)
    .option('--checks <list>', 'comma-separated checks (default: every check the key and plan allow)')
    .option('--name <text>', "a name for the batches (default: the input's file name)")
    .option(
      '--no-formula-escape',
      "CSV output: write every cell exactly as it is; by default a text cell that starts with =, +, -, @, a tab or a CR (and isn't a plain number) gets a leading ' and quotes, so that a spreadsheet shows it rather than runs it"
    )
    .action(
      async (
        input: string,
        opts: {
          out?: string
          split?: string
          only?: string
          column?: string
          estimate?: boolean
          partial?: boolean
          resume?: boolean
          force?: boolean
          apiUrl?: string
          apiKey?: string
          chunkSize?: number
          checks?: string
          name?: string
          formulaEscape: boolean
        }
      ) => {
        const apiKey = opts.apiKey ?? process.env.SVC_API_KEY
        if (!apiKey) usage('an API key is needed (--api-key or SVC_API_KEY)')
        const [{ ListError }, { VERDICTS }, { verifyFileInWorker }] = await Promise.all([
          import('../client/lists/call.ts'),
          import('../client/lists/run.ts'),
          import('../client/lists/worker.ts')
        ])
        if (!opts.estimate && opts.out === undefined && opts.split === undefined)
          usage('say where results go: --out <file>, --split <dir>, or both (or --estimate)')
        const only = opts.only
          ?.split(',')
          .map(v => v.trim())
          .filter(v => v !== '')
        if (only?.some(v => !(VERDICTS as readonly string[]).includes(v))) usage(`--only takes verdicts among ${VERDICTS.join(', ')}`)
        if (opts.only !== undefined && opts.out === undefined) usage('--only filters --out: give --out too')
        const bars = new Map<string, ReturnType<typeof progressBar>>()
        const controller = new AbortController()
        let interrupts = 0
        const onInterrupt = (): void => {
          if (++interrupts > 1) process.exit(130)
          process.stderr.write('\nstopping: writing the results already done (Ctrl-C again to quit at once)\n')
          controller.abort()
        }
        process.on('SIGINT', onInterrupt)
        try {
          const r = await verifyFileInWorker(
            {
              input,
              out: opts.out,
              split: opts.split,
              only: only as Array<(typeof VERDICTS)[number]> | undefined,
              force: opts.force === true,
              estimate: opts.estimate === true,
              partial: opts.partial === true,
              resume: opts.resume === true,
              api_url: opts.apiUrl ?? process.env.SVC_API_URL ?? 'http://127.0.0.1:8080',
              api_key: apiKey,
              chunk_size: opts.chunkSize,
              column: opts.column,
              checks: opts.checks
                ?.split(',')
                .map(c => c.trim())
                .filter(c => c !== ''),
              name: opts.name,
              formula_escape: opts.formulaEscape
            },
            (phase, done, total) => {
              let bar = bars.get(phase)
              if (!bar) {
                for (const b of bars.values()) b.stop()
                bar = progressBar(phase, phase === 'verify' ? 'addresses' : 'rows', total === null, phase === 'verify')
                bars.set(phase, bar)
              }
              bar.update(done, total ?? done)
            },
            controller.signal
          )
          for (const b of bars.values()) b.stop()
          console.log(JSON.stringify(r))
          if ('complete' in r && !r.complete) {
            console.error(
              `${r.pending_rows} rows pending: ${r.stopped ?? ''}${r.tokens_needed > 0 ? `; the rest needs ${r.tokens_needed} tokens` : ''}; run again with --resume to finish`
            )
            if (!opts.partial || (r.stopped !== null && !r.stopped.startsWith('the balance covered'))) process.exitCode = 1
          }
        } catch (err) {
          for (const b of bars.values()) b.stop()
          if (!(err instanceof ListError)) throw err
          console.error(`error: ${err.message}${err.code ? ` (${err.code})` : ''}`)
          process.exitCode = 1
        } finally {
          process.off('SIGINT', onInterrupt)
        }
      }
    )
}
