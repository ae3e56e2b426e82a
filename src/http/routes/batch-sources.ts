import { PassThrough, type Readable, Transform, type TransformCallback } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { attachBatchSource } from '../../commands/batch-source/attach-batch-source.ts'
import { removeBatchSource } from '../../commands/batch-source/remove-batch-source.ts'
import { batchSource, getBatch, type BatchDoc } from '../../projections/batches.ts'
import { batchItems } from '../../projections/batch-items.ts'
import { addressKey, layoutFromHead, readRows, shapeOf, streamWriter, type Layout, type Row } from '../../lists/files.ts'
import { mergeRows, type StoredResult } from '../../lists/merge.ts'
import { principalOf } from '../plugins/auth.ts'
import { HttpProblem } from '../problem.ts'
import { NoContent, Timestamp, UuidParams, problems } from '../schemas.ts'
import type { HttpRuntime } from '../runtime.ts'

/** The media types a list file may come as, and what each is. */
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
const UPLOAD_TYPES = ['text/csv', 'text/plain', 'text/tab-separated-values', XLSX, 'application/octet-stream']
/** Bytes a kept file may hold per address the plan allows in a batch (a row of a wide CRM export), and at least. */
const BYTES_PER_ROW = 2_048
const MIN_FILE_BYTES = 4 * 1024 * 1024

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

const SourceQuery = z.object({
  name: z.string().min(1).max(255).optional().meta({ description: "the file's name (default: the batch's name)" }),
  column: z.string().min(1).max(200).optional().meta({ description: 'the address column: a header name or a number from 1 (found from the values otherwise)' })
})
const DownloadQuery = z.object({
  original: z.enum(['true', 'false']).optional().meta({ description: '`true`: the file as uploaded, without results' })
})

/** Counts what passes and fails past `limit` bytes; keeps the first 64 KiB (the layout is read from them). */
class Metered extends Transform {
  bytes = 0
  head: Buffer = Buffer.alloc(0)
  private readonly limit: number
  constructor(limit: number) {
    super()
    this.limit = limit
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length
    if (this.head.length < 65_536) this.head = Buffer.concat([this.head, chunk.subarray(0, 65_536 - this.head.length)])
    if (this.bytes > this.limit) {
      done(new HttpProblem(413, 'batch_source.too_large', `a list file may hold ${this.limit} bytes on this plan`))
      return
    }
    done(null, chunk)
  }
}

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
 * A batch's list file kept beside it (issue "Lists at leader parity", item 5): uploaded
 * once the batch exists (`PUT`), downloaded later — from any browser — with its original
 * columns and the result columns, in its own format (`GET`), or removed (`DELETE`). Kept
 * sealed with the account's data key in the blob store for `LIST_FILE_RETENTION_DAYS`,
 * erased with the account. Every transfer streams.
 */
export function batchSourceRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  fastify.register(async child => {
    // The file's bytes reach the handler as a stream (sealed on the way to the store), whatever they are.
    child.addContentTypeParser(UPLOAD_TYPES, (_request, payload, done) => {
      done(null, payload)
    })
    // Only list files: any other type (JSON, a form) is a 415 before its body is parsed.
    child.addHook('preParsing', async (request, reply) => {
      const type = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
      if (request.method === 'PUT' && !UPLOAD_TYPES.includes(type)) {
        reply.header('connection', 'close')
        throw new HttpProblem(415, 'put_batch_source.unsupported_media_type', `send the file as one of: ${UPLOAD_TYPES.join(', ')}`)
      }
    })
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
        querystring: SourceQuery,
        consumes: UPLOAD_TYPES,
        body: z.any().meta({ description: 'the file, as bytes' }),
        response: { 201: SourceView, ...problems(400, 401, 403, 404, 413, 415, 429) }
      },
      handler: async (request, reply) => {
        const p = principalOf(request)
        const doc = await getBatch(rt.ctx, p.user_uuid, request.params.uuid)
        if (!doc) throw new HttpProblem(404, 'batch.not_found', 'no such batch')
        const name = request.query.name ?? doc.name ?? 'list.csv'
        const meter = new Metered(Math.max(MIN_FILE_BYTES, p.plan.max_batch_size * BYTES_PER_ROW))
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
          layout = layoutFromHead(meter.head, meter.bytes <= 65_536, name)
          if (meter.bytes === 0) throw new Error('the file is empty')
        } catch (err) {
          await rt.blobs.delete(p.user_uuid, blobId)
          throw new HttpProblem(415, 'batch_source.unsupported_file', `${(err as Error).message}: send a CSV, TSV, text or XLSX file`)
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
        await rt.caughtUp(kept.position)
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
      const owner = principalOf(request).user_uuid
      const doc = await getBatch(rt.ctx, owner, request.params.uuid)
      if (!doc) throw new HttpProblem(404, 'batch.not_found', 'no such batch')
      const source = await batchSource(rt.ctx, doc)
      if (!source) throw new HttpProblem(404, 'batch_source.not_found', 'this batch keeps no file (none was uploaded, or its retention ended)')
      const open = async (): Promise<Readable> => {
        const [sealed, unseal] = await Promise.all([rt.blobs.open(owner, source.blob_id), rt.ctx.sealer.unsealStream(owner)])
        if (!sealed || !unseal) throw new HttpProblem(410, 'batch_source.gone', 'the file is no longer kept')
        return sealed.pipe(unseal)
      }
      if (request.query.original === 'true') {
        return reply
          .code(200)
          .header('content-type', mediaOf(source.format))
          .header('content-disposition', disposition(source.name))
          .send((await open()) as unknown as string)
      }
      const headOf = async (): Promise<{ head: Buffer; whole: boolean }> => {
        const chunks: Buffer[] = []
        let n = 0
        const s = await open()
        for await (const c of s) {
          chunks.push(c as Buffer)
          n += (c as Buffer).length
          if (n >= 65_536) break
        }
        s.destroy()
        return { head: Buffer.concat(chunks).subarray(0, 65_536), whole: n < 65_536 }
      }
      const { head, whole } = await headOf()
      const layout = layoutFromHead(head, whole, source.name)
      const out = new PassThrough()
      const base = source.name.replace(/\.[A-Za-z0-9]+$/, '')
      const extension = layout.format === 'xlsx' ? 'xlsx' : layout.delimiter === '\t' ? 'tsv' : 'csv'
      reply
        .code(200)
        .header('content-type', mediaOf(layout.format === 'txt' ? 'csv' : layout.format, layout))
        .header('content-disposition', disposition(`${base}-verified.${extension}`))
      void mergeKept(rt, owner, doc, source.column, layout, open, out).catch(err => {
        out.destroy(err as Error)
      })
      return await reply.send(out as unknown as string)
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
      const owner = principalOf(request).user_uuid
      const doc = await getBatch(rt.ctx, owner, request.params.uuid)
      if (!doc?.source) throw new HttpProblem(404, 'batch_source.not_found', 'this batch keeps no file')
      await rt.caughtUp(await removeBatchSource(rt.ctx, doc.uuid, doc.source.blob_id, 'requested', owner))
      return reply.code(204).send()
    }
  })
}

/**
 * The kept file with its results, written into `out`: the batch's items indexed by their
 * address's de-duplication key in a temporary SQLite file (bounded memory whatever the
 * batch's size), the file read once for its shape (header, widest row) and once more to
 * merge. Cost: the batch's items read once (1,000 a page), the file decrypted twice.
 */
async function mergeKept(
  rt: HttpRuntime,
  owner: string,
  doc: BatchDoc,
  column: string | null,
  layout: Layout,
  open: () => Promise<Readable>,
  out: PassThrough
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-merge-'))
  const db = new DatabaseSync(join(dir, 'index.db'))
  try {
    db.exec(
      'PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; CREATE TABLE items (k TEXT PRIMARY KEY, i INTEGER NOT NULL, verdict TEXT, reason TEXT, score INTEGER, flags TEXT, did_you_mean TEXT, mx_host TEXT, smtp_provider TEXT, checked_at TEXT)'
    )
    const insert = db.prepare('INSERT OR IGNORE INTO items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
    for (let from = 0; from < doc.total; from += 1_000) {
      const page = await batchItems(rt.ctx, owner, doc.uuid, from, 1_000)
      db.exec('BEGIN')
      for (const it of page)
        insert.run(
          addressKey(it.email),
          it.i,
          it.status === 'done' ? it.verdict : null,
          it.reason,
          it.score,
          it.flags.join(' '),
          it.did_you_mean,
          it.mx_host,
          it.smtp_provider,
          it.checked_at
        )
      db.exec('COMMIT')
    }
    const byKey = db.prepare('SELECT i FROM items WHERE k = ?')
    const byIndex = db.prepare('SELECT verdict, reason, score, flags, did_you_mean, mx_host, smtp_provider, checked_at FROM items WHERE i = ?')
    // The shape: the first rows say header and column, every row its width.
    const sample: Row[] = []
    let width = 0
    const first = await open()
    for await (const row of readRows(() => first, layout)) {
      if (sample.length < 1_000) sample.push(row)
      width = Math.max(width, row.cells.length)
    }
    const shape = shapeOf(sample, column ?? undefined)
    const writer = await streamWriter(out, layout.format === 'txt' ? { ...layout, format: 'csv' } : layout)
    const second = await open()
    await mergeRows(
      readRows(() => second, layout),
      { ...shape, width: Math.max(width, shape.header?.length ?? 0) },
      {
        idOf: key => {
          const r = byKey.get(key) as { i: number } | undefined
          return r === undefined ? null : Number(r.i)
        },
        result: i => {
          const r = byIndex.get(i) as (StoredResult & { verdict: string | null }) | undefined
          return r === undefined || r.verdict === null ? null : { ...r, verdict: r.verdict, score: r.score === null ? null : Number(r.score) }
        }
      },
      { all: writer }
    )
    await writer.close()
  } finally {
    db.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
