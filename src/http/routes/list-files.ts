import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { FAULT_STATUS, ListFileError } from '../../lists/file-limits.ts'
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
