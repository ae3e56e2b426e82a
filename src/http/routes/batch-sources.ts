import { PassThrough, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { attachBatchSource } from '../../commands/batch-source/attach-batch-source.ts'
import { removeBatchSource } from '../../commands/batch-source/remove-batch-source.ts'
import { batchSource, getBatch } from '../../projections/batches.ts'
import { batchItems } from '../../projections/batch-items.ts'
import { keptFileUsage } from '../../projections/kept-files.ts'
import { keptFileMaxBytes, keptFilesQuotaBytes } from '../../domain/plans.ts'
import { layoutFromHead, type Layout } from '../../lists/files.ts'
import { VERDICTS } from '../../lists/merge.ts'
import { keptFileLimits, type FileLimits } from '../../lists/file-limits.ts'
import { Metered, mergedOutput, readHead } from '../../lists/streams.ts'
import { environmentOf, principalOf } from '../plugins/auth.ts'
import { HttpProblem } from '../problem.ts'
import { FormulaEscape, NoContent, Timestamp, UuidParams, listOf, problems } from '../schemas.ts'
import type { HttpRuntime } from '../runtime.ts'
import { clientGone } from '../waited-read.ts'
import { FileQuery, LIST_FILE_TYPES, XLSX, fileLayout, fileProblem, listFileScope, requireXlsxWithin } from './list-files.ts'

/** Files an account may keep at once, whatever their size (each batch keeps one). */
const MAX_KEPT_FILES = 1_000

const SourceView = z
  .object({
    name: z.string().meta({ description: "the file's name, as uploaded" }),
    format: z.enum(['csv', 'txt', 'xlsx']),
    bytes: z.number().int(),
    column: z.string().nullable().meta({ description: 'the address column chosen (a header name or a number from 1); null: found from the values' }),
    attached_at: Timestamp,
    expires_at: Timestamp.meta({ description: 'when the file is removed (LIST_FILE_RETENTION_DAYS after the upload); it goes with the account sooner' })
  })
  .meta({ id: 'BatchSource' })

const DownloadQuery = z.object({
  original: z.enum(['true', 'false']).optional().meta({ description: '`true`: the file as uploaded, without results' }),
  formula_escape: FormulaEscape,
  verdict: listOf(VERDICTS, 'verdict').optional().meta({
    description: 'a segment: only the rows whose address has one of these verdicts (`valid` for a clean list), the header kept; every row when absent'
  })
})

const mediaOf = (format: 'csv' | 'txt' | 'xlsx', layout?: Layout): string =>
  format === 'xlsx'
    ? XLSX
    : layout?.delimiter === '\t'
      ? 'text/tab-separated-values; charset=utf-8'
      : format === 'txt'
        ? 'text/plain; charset=utf-8'
        : 'text/csv; charset=utf-8'
const disposition = (name: string): string => `attachment; filename="${name.replace(/[^\w.() -]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`

/**
 * A batch's list file kept beside it: uploaded
 * once the batch exists (`PUT`), downloaded later — from any browser — with its original
 * columns and the result columns, in its own format (`GET`), or removed (`DELETE`). Kept
 * sealed with the account's data key in the blob store for `LIST_FILE_RETENTION_DAYS`,
 * erased with the account. Every transfer streams.
 */
export function batchSourceRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  listFileScope(fastify, 'put_batch_source', child => {
    const app = child.withTypeProvider<ZodTypeProvider>()
    const tags = ['Batches']

    app.route({
      method: 'PUT',
      url: '/api/batches/:uuid/source',
      config: { auth: 'any', scope: 'email:verify:bulk' },
      schema: {
        operationId: 'putBatchSource',
        summary: "Keep the list's file beside its batch (CSV, TSV, text or XLSX as sent), to download it later with its results",
        tags,
        params: UuidParams,
        querystring: FileQuery,
        consumes: LIST_FILE_TYPES,
        body: z.any().meta({ description: 'the file, as bytes' }),
        response: { 201: SourceView, ...problems(400, 401, 403, 404, 413, 415, 429) }
      },
      handler: async (request, reply) => {
        const p = principalOf(request)
        const doc = await getBatch(rt.ctx, p.user_uuid, environmentOf(p), request.params.uuid)
        if (!doc) throw new HttpProblem(404, 'batch.not_found', 'no such batch')
        const name = request.query.name ?? doc.name ?? 'list.csv'
        // The plan's bound of one file, and what the account may still keep (this batch's own file is replaced, so it is free).
        const perFile = keptFileMaxBytes(p.plan)
        const quota = keptFilesQuotaBytes(p.plan)
        const usage = await keptFileUsage(rt.ctx, p.user_uuid)
        const room = quota - usage.bytes + (doc.source?.bytes ?? 0)
        const overQuota = (): HttpProblem =>
          new HttpProblem(
            403,
            'batch_source.storage_quota_exceeded',
            `the account keeps ${usage.bytes} bytes of list files; the plan allows ${quota}: remove kept files (DELETE /api/batches/{uuid}/source) or wait for their retention to end`
          )
        if (usage.files - (doc.source ? 1 : 0) >= MAX_KEPT_FILES)
          throw new HttpProblem(403, 'batch_source.storage_quota_exceeded', `an account keeps at most ${MAX_KEPT_FILES} list files at once: remove some first`)
        const meter = new Metered(Math.max(0, Math.min(perFile, room)), () =>
          room < perFile ? overQuota() : new HttpProblem(413, 'batch_source.too_large', `a list file may hold ${perFile} bytes on this plan`)
        )
        const blobId = rt.ctx.newId()
        const body = request.body as Readable
        const sealed = new PassThrough()
        // The request stream is piped, not put in the pipeline: a refusal must not destroy the
        // connection before the client has read the answer (the rest is drained instead).
        body.on('error', err => {
          meter.destroy(err)
        })
        body.pipe(meter)
        const feeding = pipeline(meter, await rt.ctx.sealer.sealStream(p.user_uuid), sealed)
        const [stored, fed] = await Promise.allSettled([rt.blobs.put(p.user_uuid, blobId, sealed), feeding])
        if (stored.status === 'rejected' || fed.status === 'rejected') {
          // Whatever stopped the upload, the rest of the body is read and dropped: the client reads the answer (on a connection closed after it).
          body.unpipe(meter)
          body.resume()
          reply.header('connection', 'close')
          await rt.blobs.delete(p.user_uuid, blobId)
          const cause = fed.status === 'rejected' ? fed.reason : (stored as PromiseRejectedResult).reason
          throw cause instanceof HttpProblem
            ? cause
            : new HttpProblem(400, 'batch_source.upload_failed', `the file did not arrive whole: ${(cause as Error).message}`)
        }
        let layout: Layout
        try {
          layout = fileLayout(meter.head, meter.bytes, name, 'batch_source')
        } catch (err) {
          await rt.blobs.delete(p.user_uuid, blobId)
          throw err
        }
        // Read through once, off the event loop, within the file's bounds: a file that cannot be merged later is refused now.
        const limits = keptFileLimits(meter.bytes, perFile, p.plan.max_batch_size)
        try {
          requireXlsxWithin(layout, meter.bytes, limits)
          await rt.list_files.inspect(
            p.user_uuid,
            { open: async () => await openKept(rt, p.user_uuid, blobId), layout, column: request.query.column ?? null, limits },
            clientGone(reply)
          )
        } catch (err) {
          await rt.blobs.delete(p.user_uuid, blobId)
          throw fileProblem(err, 'batch_source')
        }
        let kept: { attached_at: string; expires_at: string; position: number }
        try {
          kept = await attachBatchSource(
            rt.ctx,
            p.user_uuid,
            doc.uuid,
            { blob_id: blobId, file_name: name, format: layout.format, bytes: meter.bytes, column: request.query.column ?? null },
            rt.ctx.config.list_files.retention_days
          )
        } catch (err) {
          await rt.blobs.delete(p.user_uuid, blobId)
          throw err
        }
        await rt.caughtUp(request, kept.position)
        return reply.code(201).send({
          name,
          format: layout.format,
          bytes: meter.bytes,
          column: request.query.column ?? null,
          attached_at: kept.attached_at,
          expires_at: kept.expires_at
        })
      }
    })
  })

  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const tags = ['Batches']
  const fileTypes = {
    'text/csv': { schema: z.string() },
    'text/tab-separated-values': { schema: z.string() },
    'text/plain': { schema: z.string() },
    [XLSX]: { schema: z.string().meta({ format: 'binary' }) }
  }

  app.route({
    method: 'GET',
    url: '/api/batches/:uuid/source',
    config: { auth: 'any', scope: 'results:read' },
    schema: {
      operationId: 'getBatchSource',
      summary:
        "The list's kept file with the result columns added to every row (its own format: CSV in, CSV out; XLSX in, XLSX out), or as uploaded with `original=true`",
      tags,
      params: UuidParams,
      querystring: DownloadQuery,
      response: { 200: { description: 'The file, streamed', content: fileTypes }, ...problems(400, 401, 403, 404, 410, 429) }
    },
    handler: async (request, reply) => {
      const principal = principalOf(request)
      const owner = principal.user_uuid
      const doc = await getBatch(rt.ctx, owner, environmentOf(principal), request.params.uuid)
      if (!doc) throw new HttpProblem(404, 'batch.not_found', 'no such batch')
      const source = await batchSource(rt.ctx, doc)
      if (!source) throw new HttpProblem(404, 'batch_source.not_found', 'this batch keeps no file (none was uploaded, or its retention ended)')
      const open = async (): Promise<Readable> => await openKept(rt, owner, source.blob_id)
      if (request.query.original === 'true') {
        return reply
          .code(200)
          .header('content-type', mediaOf(source.format))
          .header('content-disposition', disposition(source.name))
          .send((await open()) as unknown as string)
      }
      const { head, whole } = await readHead(open)
      const layout = layoutFromHead(head, whole, source.name)
      // The bounds of the catalogue's largest plan: a file taken under any plan is read back
      // after a downgrade too (the upload held it to its plan's bounds, which are smaller).
      const widest = rt.ctx.config.plans.plans.reduce((a, b) => (b.max_batch_size > a.max_batch_size ? b : a))
      const limits: FileLimits = keptFileLimits(source.bytes, Math.max(keptFileMaxBytes(widest), source.bytes), Math.max(widest.max_batch_size, doc.total))
      const gone = clientGone(reply)
      let out: PassThrough
      try {
        // Read through and found sound before the first byte: a refusal is still a problem answer.
        out = await mergedOutput(into =>
          rt.list_files.merge(
            owner,
            {
              open,
              items: async (from, count) =>
                (await batchItems(rt.ctx, owner, doc.uuid, from, count)).map(it => ({
                  i: it.i,
                  email: it.email,
                  verdict: it.status === 'done' ? it.verdict : null,
                  reason: it.reason,
                  score: it.score,
                  flags: it.flags,
                  did_you_mean: it.did_you_mean,
                  mx_host: it.mx_host,
                  smtp_provider: it.smtp_provider,
                  checked_at: it.checked_at
                })),
              total: doc.total,
              layout,
              out: layout.format === 'txt' ? { ...layout, format: 'csv' } : layout,
              column: source.column,
              limits,
              formula_escape: request.query.formula_escape !== 'false',
              into,
              ...(request.query.verdict && { only: request.query.verdict })
            },
            gone
          )
        )
      } catch (err) {
        throw fileProblem(err, 'batch_source')
      }
      const base = source.name.replace(/\.[A-Za-z0-9]+$/, '')
      const extension = layout.format === 'xlsx' ? 'xlsx' : layout.delimiter === '\t' ? 'tsv' : 'csv'
      return await reply
        .code(200)
        .header('content-type', mediaOf(layout.format === 'txt' ? 'csv' : layout.format, layout))
        .header('content-disposition', disposition(`${base}-${request.query.verdict ? request.query.verdict.join('-') : 'verified'}.${extension}`))
        .send(out as unknown as string)
    }
  })

  app.route({
    method: 'DELETE',
    url: '/api/batches/:uuid/source',
    config: { auth: 'any', scope: 'email:verify:bulk' },
    schema: {
      operationId: 'deleteBatchSource',
      summary: "Remove the list's kept file now (its results stay with the batch)",
      tags,
      params: UuidParams,
      response: { 204: NoContent, ...problems(401, 403, 404, 429) }
    },
    handler: async (request, reply) => {
      const p = principalOf(request)
      const owner = p.user_uuid
      const doc = await getBatch(rt.ctx, owner, environmentOf(p), request.params.uuid)
      if (!doc?.source) throw new HttpProblem(404, 'batch_source.not_found', 'this batch keeps no file')
      await rt.caughtUp(request, await removeBatchSource(rt.ctx, doc.uuid, doc.source.blob_id, 'requested', owner))
      return reply.code(204).send()
    }
  })
}

/**
 * A kept file's bytes, opened with the owner's data key.
 * @throws HttpProblem 410 `batch_source.gone` when the file or the key is gone.
 */
async function openKept(rt: HttpRuntime, owner: string, blobId: string): Promise<Readable> {
  const [sealed, unseal] = await Promise.all([rt.blobs.open(owner, blobId), rt.ctx.sealer.unsealStream(owner)])
  if (!sealed || !unseal) {
    sealed?.destroy()
    throw new HttpProblem(410, 'batch_source.gone', 'the file is no longer kept')
  }
  // Whichever ends first ends both: a reader that stops early closes the blob's descriptor too.
  pipeline(sealed, unseal).catch(() => {})
  return unseal
}
