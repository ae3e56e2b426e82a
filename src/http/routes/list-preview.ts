import { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { keptFileMaxBytes } from '../../domain/plans.ts'
import { keptFileLimits } from '../../lists/file-limits.ts'
import { Metered } from '../../lists/streams.ts'
import { principalOf } from '../plugins/auth.ts'
import { HttpProblem } from '../problem.ts'
import { problems } from '../schemas.ts'
import type { HttpRuntime } from '../runtime.ts'
import { clientGone } from '../waited-read.ts'
import { FileQuery, LIST_FILE_TYPES, fileLayout, fileProblem, listFileScope, requireXlsxWithin } from './list-files.ts'

/** What `POST /api/lists/preview` answers. */
const ListPreview = z
  .object({
    name: z.string(),
    format: z.enum(['csv', 'txt', 'xlsx']),
    header: z.array(z.string()).nullable().meta({ description: "the header row's names, or null when the first row is data" }),
    columns: z.array(z.string()).meta({ description: 'each column by its header name, or `column <n>` from 1' }),
    column: z.number().int().meta({ description: 'the address column, from 0: the one named by `column`, else the one whose values look most like addresses' }),
    rows: z.number().int().meta({ description: 'rows of data (the header not counted)' }),
    sample: z.array(z.array(z.string())).meta({ description: 'the first 5 rows of data, each cell as text' }),
    addresses: z
      .array(z.string())
      .meta({ description: "the address column's values, trimmed, each once (a repeat is the same address lower-cased, its domain in ASCII), in file order" }),
    unique: z.number().int(),
    duplicates: z.number().int().meta({ description: 'rows whose address repeats an earlier one' }),
    empty: z.number().int().meta({ description: 'rows with nothing in the address column' })
  })
  .meta({ id: 'ListPreview' })

/**
 * POST /api/lists/preview: a list file read off the event loop (the file threads' preview
 * task), before anything is kept or spent: what a person checks before paying, and the
 * addresses a client sends as a batch. Bounded by the plan's file size (413) and the file
 * threads' per-account and service queues (429, 503).
 */
export function listPreviewRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  listFileScope(fastify, 'preview_list', child => {
    const app = child.withTypeProvider<ZodTypeProvider>()
    const tags = ['Batches']
    app.route({
      method: 'POST',
      url: '/api/lists/preview',
      config: { auth: 'any', scope: 'email:verify:bulk' },
      schema: {
        operationId: 'previewList',
        summary:
          'What a list file holds, before anything is spent (CSV, TSV, text or XLSX as sent): its columns, the address column found (or named), its first rows, and its addresses, each once, ready to send as a batch',
        tags,
        querystring: FileQuery,
        consumes: LIST_FILE_TYPES,
        body: z.any().meta({ description: 'the file, as bytes' }),
        response: { 200: ListPreview, ...problems(400, 401, 403, 413, 415, 429, 503) }
      },
      handler: async (request, reply) => {
        const p = principalOf(request)
        const name = request.query.name ?? 'list.csv'
        const perFile = keptFileMaxBytes(p.plan)
        // Held in memory while it is read twice (its shape, then its rows): bounded by the plan's file size, and by LIST_FILE_PER_ACCOUNT files at once.
        const meter = new Metered(perFile, () => new HttpProblem(413, 'preview_list.too_large', `a list file may hold ${perFile} bytes on this plan`))
        const chunks: Buffer[] = []
        const body = request.body as Readable
        body.on('error', err => {
          meter.destroy(err)
        })
        body.pipe(meter)
        try {
          for await (const chunk of meter) chunks.push(chunk as Buffer)
        } catch (err) {
          body.unpipe(meter)
          body.resume()
          reply.header('connection', 'close')
          throw err instanceof HttpProblem
            ? err
            : new HttpProblem(400, 'preview_list.upload_failed', `the file did not arrive whole: ${(err as Error).message}`)
        }
        const bytes = Buffer.concat(chunks)
        const layout = fileLayout(meter.head, bytes.length, name, 'preview_list')
        const limits = keptFileLimits(bytes.length, perFile, p.plan.max_batch_size)
        try {
          requireXlsxWithin(layout, bytes.length, limits)
          const seen = await rt.list_files.preview(
            p.user_uuid,
            { open: async () => Readable.from([bytes]), layout, column: request.query.column ?? null, limits },
            clientGone(reply)
          )
          const width = Math.max(seen.width, 1)
          return {
            name,
            format: layout.format,
            header: seen.header,
            columns: Array.from({ length: width }, (_, i) => seen.header?.[i] || `column ${i + 1}`),
            column: seen.column,
            rows: seen.rows - (seen.header === null ? 0 : 1),
            sample: seen.sample,
            addresses: seen.addresses,
            unique: seen.addresses.length,
            duplicates: seen.duplicates,
            empty: seen.empty
          }
        } catch (err) {
          throw fileProblem(err, 'preview_list')
        }
      }
    })
  })
}
