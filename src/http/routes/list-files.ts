import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { FAULT_STATUS, ListFileError, type FileLimits } from '../../lists/file-limits.ts'
import { layoutFromHead, type Layout } from '../../lists/files.ts'
import { HEAD_BYTES } from '../../lists/streams.ts'
import { FileWorkBusy } from '../../lists/file-work.ts'
import { HttpProblem } from '../problem.ts'

/** The media type of an XLSX workbook. */
export const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
/** The media types a list file may come as (the OpenAPI document's `consumes`). */
export const LIST_FILE_TYPES: string[] = ['text/csv', 'text/plain', 'text/tab-separated-values', XLSX, 'application/octet-stream']

/** A list file's name and address column, as a request names them. */
export const FileQuery = z.object({
  name: z.string().min(1).max(255).optional().meta({ description: "the file's name (default: the batch's name)" }),
  column: z.string().min(1).max(200).optional().meta({ description: 'the address column: a header name or a number from 1 (found from the values otherwise)' })
})

/**
 * How a list file of `bytes` bytes named `name` is laid out, from its first bytes (`head`,
 * up to HEAD_BYTES: src/lists/files.ts `layoutFromHead`).
 * @throws HttpProblem 415 `<operation>.unsupported_file` for an empty file or one that is not CSV, TSV, text or XLSX.
 */
export function fileLayout(head: Buffer, bytes: number, name: string, operation: 'batch_source' | 'preview_list'): Layout {
  try {
    if (bytes === 0) throw new Error('the file is empty')
    return layoutFromHead(head, bytes <= HEAD_BYTES, name)
  } catch (err) {
    throw new HttpProblem(415, `${operation}.unsupported_file`, `${(err as Error).message}: send a CSV, TSV, text or XLSX file`)
  }
}

/** @throws ListFileError `xlsx_too_large` for a workbook over its bound (`limits.xlsx_bytes`): unzipping it would cost more than a CSV of the same list. */
export function requireXlsxWithin(layout: Layout, bytes: number, limits: Pick<FileLimits, 'xlsx_bytes'>): void {
  if (layout.format === 'xlsx' && bytes > limits.xlsx_bytes)
    throw new ListFileError('xlsx_too_large', `an XLSX file may hold ${limits.xlsx_bytes} bytes; this one holds ${bytes}: save it as CSV`)
}

/** A refusal of the file work as the problem `<operation>.<reason>` it is answered with. */
export function fileProblem(err: unknown, operation: 'batch_source' | 'preview_list'): unknown {
  if (err instanceof ListFileError) return new HttpProblem(FAULT_STATUS[err.reason], `${operation}.${err.reason}`, err.message)
  if (err instanceof FileWorkBusy)
    return err.scope === 'account'
      ? new HttpProblem(429, `${operation}.too_many_requests`, `${err.message}: try again when one has ended`, undefined, 5)
      : new HttpProblem(503, `${operation}.busy`, `${err.message}: try again in a moment`, undefined, 5)
  return err
}

/**
 * Registers `routes` in a scope whose requests bring a list file: its bytes reach the
 * handler as a stream, whatever they are; a write (PUT or POST) of any other type (JSON, a
 * form) is a 415 `<operation>.unsupported_media_type` before its body is read.
 */
export function listFileScope(fastify: FastifyInstance, operation: string, routes: (child: FastifyInstance) => void): void {
  fastify.register(async child => {
    child.addContentTypeParser(LIST_FILE_TYPES, (_request, payload, done) => {
      done(null, payload)
    })
    child.addHook('preParsing', async (request, reply) => {
      const type = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
      if ((request.method === 'PUT' || request.method === 'POST') && !LIST_FILE_TYPES.includes(type)) {
        reply.header('connection', 'close')
        throw new HttpProblem(415, `${operation}.unsupported_media_type`, `send the file as one of: ${LIST_FILE_TYPES.join(', ')}`)
      }
    })
    routes(child)
  })
}
