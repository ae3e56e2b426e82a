import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { stringify } from 'csv-stringify'
import { csvOptions } from '../../lists/files.ts'
import { FLAG_COLUMNS, VERDICTS } from '../../lists/merge.ts'
import { addChunk } from '../../flows/batch-submission/add-chunk.ts'
import { checksFor, type BatchSubmitter, type ChunkOutcome } from '../../flows/batch-submission/shared/batch-intake.ts'
import { createBatch } from '../../flows/batch-submission/create-batch.ts'
import { costOf } from '../../domain/checks.ts'
import { getWallet } from '../../projections/wallets.ts'
import { getBatch, listBatches, type BatchDoc } from '../../projections/batches.ts'
import { batchItems } from '../../projections/batch-items.ts'
import { getUserDoc } from '../../projections/users.ts'
import { actingIn, environmentOf, listedEnvironment, principalOf, type Principal } from '../plugins/auth.ts'
import { bodyGuard, type BodyAllowance } from '../plugins/body-guard.ts'
import type { Plan } from '../../domain/plans.ts'
import { HttpProblem } from '../problem.ts'
import {
  BODY_PROBLEMS,
  EnvironmentQuery,
  FormulaEscape,
  type FlagSchema,
  PageQuery,
  listOf,
  Paginated,
  type ReasonSchema,
  UuidParams,
  type VerdictSchema,
  WaitQuery,
  json,
  problems
} from '../schemas.ts'
import { waitedRead } from '../waited-read.ts'
import type { HttpRuntime } from '../runtime.ts'
import { Batch, Accepted, BatchItem, CreateBatch, AddChunk, EstimateRequest, Estimate, batchView } from './batch-schemas.ts'

const submitterOf = (p: Principal): BatchSubmitter => ({
  user_uuid: p.user_uuid,
  environment: p.environment,
  sees: environmentOf(p),
  key_uuid: p.key_uuid,
  agent_uuid: p.agent_uuid,
  enabled_checks: p.enabled_checks,
  plan: p.plan
})

/** The columns of a batch's results as CSV: the result columns of a list's file with its results (src/lists/merge.ts), after the address. */
const RESULTS_CSV_COLUMNS = [
  'position',
  'email',
  'normalized',
  'status',
  'verdict',
  'reason',
  'score',
  ...FLAG_COLUMNS,
  'did_you_mean',
  'mx_host',
  'smtp_provider',
  'checked_at'
] as const

/** Pages of the CSV export (items read per range of the index). */
const CSV_PAGE = 1_000

/** Bytes a batch request may spend per address of the plan's chunk: the longest address (254 octets, RFC 5321 §4.5.3.1.3) twice over, for escapes and layout. */
const BYTES_PER_ADDRESS = 512

/** Bytes a batch request may hold besides its addresses (checks, name, layout). */
const BODY_BASE = 64 * 1024

/**
 * What a batch request of a caller on `plan` may hold before it is parsed: 512 bytes and two JSON values per address of the plan's
 * chunk (`max_chunk_size`), plus 64 KiB. A list a little over the chunk is parsed and
 * refused with the interface's 400 (`too_many`); one far over it, or a body stuffed with
 * short values, is a 413 before it costs memory. Bounded by the plan: at most 25.7 MB and
 * 100,064 values on the largest plan of the default catalogue.
 */
function batchBodyAllowance(plan: Pick<Plan, 'max_chunk_size'>, operation: 'create_batch' | 'add_chunk'): BodyAllowance {
  const bytes = plan.max_chunk_size * BYTES_PER_ADDRESS + BODY_BASE
  return {
    bytes,
    values: 2 * plan.max_chunk_size + 64,
    depth: 4,
    code: `${operation}.body_too_large`,
    detail: `this plan accepts at most ${plan.max_chunk_size} addresses per request, in a body of at most ${bytes} bytes; send a longer list in chunks (POST /api/batches with final: false, then POST /api/batches/{uuid}/emails)`
  }
}

/** Batches (docs/interface.md §4, "Batches"). */
export function batchRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const tags = ['Batches']
  // Fastify's own ceiling: the largest plan's allowance; each caller's plan is held to its own by the guard.
  const bodyLimit = Math.max(...rt.ctx.config.plans.plans.map(p => batchBodyAllowance(p, 'create_batch').bytes))
  const guard = (operation: 'create_batch' | 'add_chunk') => bodyGuard(request => batchBodyAllowance(principalOf(request).plan, operation))

  /**
   * The batch after a write, once the read models have it (read-your-writes), with the
   * chunk's outcome. Should the batch be missing then, the answer says why: the account was
   * deleted meanwhile (410: its batches are erased with it), or the read models are late (503).
   */
  const answer = async (request: FastifyRequest, owner: string, outcome: ChunkOutcome): Promise<z.infer<typeof Accepted>> => {
    await rt.caughtUp(request, outcome.position)
    // The batch this credential just created or added to: its own environment's (the write side decided so).
    const doc = await getBatch(rt.ctx, owner, null, outcome.batch_uuid)
    if (!doc && (await getUserDoc(rt.ctx, owner)) === null)
      throw new HttpProblem(410, 'batch.account_deleted', 'the account was deleted while this request ran: its batches are erased with it')
    if (!doc) throw new HttpProblem(503, 'batch.not_ready', 'the batch was accepted; read it again in a moment')
    return { ...batchView(doc), chunk: { accepted: outcome.accepted, duplicates: outcome.duplicates, invalid: outcome.invalid, reserved: outcome.reserved } }
  }

  app.route({
    method: 'GET',
    url: '/api/batches',
    config: { auth: 'any', scope: 'results:read', invalid: 'list_batches.invalid_query' },
    schema: {
      operationId: 'listBatches',
      summary: "The account's batches, newest first; a key sees its own environment's only",
      tags,
      querystring: PageQuery.extend(EnvironmentQuery.shape),
      response: { 200: Paginated(Batch), ...problems(400, 401, 403, 429) }
    },
    handler: async request => {
      const p = principalOf(request)
      const { items, total } = await listBatches(rt.ctx, p.user_uuid, listedEnvironment(p, request.query.environment, 'list_batches'), request.query)
      return { items: items.map(batchView), total, limit: request.query.limit, offset: request.query.offset }
    }
  })

  app.route({
    method: 'POST',
    url: '/api/batches',
    bodyLimit,
    ...guard('create_batch'),
    config: { auth: 'any', scope: 'email:verify:bulk', invalid: 'create_batch.invalid_request' },
    schema: {
      operationId: 'createBatch',
      summary: 'Verify a list of addresses (a batch: 202, verified as it arrives; `final: false` keeps intake open for more chunks)',
      tags,
      body: CreateBatch,
      response: { 202: json(Accepted, 'Accepted and queued; `Location` names the batch'), ...problems(...BODY_PROBLEMS, 401, 402, 403, 410, 429, 503) }
    },
    handler: async (request, reply) => {
      const p = actingIn(principalOf(request), request.body.environment, 'create_batch')
      const outcome = await createBatch(rt.ctx, submitterOf(p), request.body)
      reply.header('location', `/api/batches/${outcome.batch_uuid}`)
      return reply.code(202).send(await answer(request, p.user_uuid, outcome))
    }
  })

  app.route({
    method: 'POST',
    url: '/api/batches/estimate',
    config: { auth: 'any', scope: 'email:verify:bulk', invalid: 'estimate_batch.invalid_request' },
    schema: {
      operationId: 'estimateBatch',
      summary: 'What a list of this many unique valid addresses would cost, against the balance, before anything is spent (nothing is reserved)',
      tags,
      body: EstimateRequest,
      response: { 200: Estimate, ...problems(...BODY_PROBLEMS, 401, 403, 429) }
    },
    handler: async request => {
      const p = actingIn(principalOf(request), request.body.environment, 'estimate_batch')
      const checks = checksFor(submitterOf(p), request.body.checks)
      const per = p.environment === 'test' ? 0 : costOf(checks)
      // The sandbox has no wallet: a test key is shown none (never the live balance), and every address is covered.
      const balance = p.environment === 'test' ? 0 : ((await getWallet(rt.ctx, p.user_uuid))?.balance ?? 0)
      const addresses = request.body.addresses
      return {
        checks,
        cost_per_address: per,
        addresses,
        cost: addresses * per,
        balance,
        covered: per === 0 ? addresses : Math.min(addresses, Math.floor(balance / per)),
        max_batch_size: p.plan.max_batch_size,
        max_chunk_size: p.plan.max_chunk_size
      }
    }
  })

  app.route({
    method: 'GET',
    url: '/api/batches/:uuid',
    config: { auth: 'any', scope: 'results:read' },
    schema: {
      operationId: 'getBatch',
      summary: 'A batch: status, progress, results by verdict and reason, tokens; with `wait`, answered as soon as it is completed (or when the wait is over)',
      tags,
      params: UuidParams,
      querystring: WaitQuery,
      response: { 200: Batch, ...problems(400, 401, 403, 404, 429) }
    },
    handler: async (request, reply) => {
      const p = principalOf(request)
      const read = async (): Promise<BatchDoc | null> => await getBatch(rt.ctx, p.user_uuid, environmentOf(p), request.params.uuid)
      const doc = await waitedRead(rt, reply, p.user_uuid, request.params.uuid, request.query.wait, read, d => d === null || d.status === 'completed')
      if (!doc) throw new HttpProblem(404, 'batch.not_found', 'no such batch')
      return batchView(doc)
    }
  })

  app.route({
    method: 'POST',
    url: '/api/batches/:uuid/emails',
    bodyLimit,
    ...guard('add_chunk'),
    config: { auth: 'any', scope: 'email:verify:bulk', invalid: 'add_chunk.invalid_request' },
    schema: {
      operationId: 'addBatchEmails',
      summary: 'Add a chunk of addresses to a batch whose intake is open (`final: true` closes it)',
      tags,
      params: UuidParams,
      body: AddChunk,
      response: { 202: json(Accepted, 'Chunk accepted and queued'), ...problems(...BODY_PROBLEMS, 401, 402, 403, 404, 409, 410, 429, 503) }
    },
    handler: async (request, reply) => {
      const p = principalOf(request)
      const outcome = await addChunk(rt.ctx, submitterOf(p), request.params.uuid, request.body)
      return reply.code(202).send(await answer(request, p.user_uuid, outcome))
    }
  })

  app.route({
    method: 'GET',
    url: '/api/batches/:uuid/results',
    config: { auth: 'any', scope: 'results:read', invalid: 'batch_results.invalid_query' },
    schema: {
      operationId: 'getBatchResults',
      summary: 'Per-address results, in the order the addresses were accepted; `Accept: text/csv` streams all of them as CSV',
      tags,
      params: UuidParams,
      querystring: PageQuery.extend({
        formula_escape: FormulaEscape,
        verdict: listOf(VERDICTS, 'verdict')
          .optional()
          .meta({ description: 'CSV only: a segment, the rows of these verdicts (`valid` for a clean list); a JSON page is never filtered (400)' })
      }),
      response: {
        200: {
          description: 'A page of results (JSON), or every result as CSV with a header line',
          content: {
            'application/json': { schema: Paginated(BatchItem) },
            'text/csv': {
              schema: z.string().meta({
                description: `${RESULTS_CSV_COLUMNS.join(',')}: \`position\` the address's place in the batch from 1 (JSON's \`index\` + 1), each flag a column of its own (true/false), the same result columns as the list's file with its results; RFC 4180 (CRLF line ends; a field holding a comma, a quote, a CR or an LF quoted, its quotes doubled), formula-like text neutralised unless \`formula_escape=false\``
              })
            }
          }
        },
        ...problems(400, 401, 403, 404, 429)
      }
    },
    handler: async (request, reply) => {
      const p = principalOf(request)
      const owner = p.user_uuid
      const doc = await getBatch(rt.ctx, owner, environmentOf(p), request.params.uuid)
      if (!doc) throw new HttpProblem(404, 'batch.not_found', 'no such batch')
      const segment = request.query.verdict ? new Set<string>(request.query.verdict) : null
      if (prefersCsv(request.headers.accept)) {
        // RFC 4180 (CRLF), addresses and our own suggestions neutralised like any text a spreadsheet might run (issue 42, item 6).
        const csv = stringify({
          ...csvOptions({ delimiter: ',', newline: '\r\n', bom: false, formula_escape: request.query.formula_escape !== 'false' }),
          header: true,
          columns: [...RESULTS_CSV_COLUMNS]
        })
        const total = doc.total
        void (async () => {
          try {
            for (let from = 0; from < total; from += CSV_PAGE) {
              for (const it of await batchItems(rt.ctx, owner, doc.uuid, from, CSV_PAGE)) {
                if (segment !== null && (it.verdict === null || !segment.has(it.verdict))) continue
                const done = it.status === 'done'
                const row = [
                  it.i + 1,
                  it.email,
                  it.normalized ?? '',
                  it.status,
                  it.verdict ?? '',
                  it.reason ?? '',
                  it.score ?? '',
                  ...FLAG_COLUMNS.map(f => (done ? it.flags.includes(f) : '')),
                  it.did_you_mean ?? '',
                  it.mx_host ?? '',
                  it.smtp_provider ?? '',
                  it.checked_at ?? ''
                ]
                // Back-pressure: wait while the client reads slower than we write.
                if (!csv.write(row)) await new Promise(resolve => csv.once('drain', resolve))
              }
            }
            csv.end()
          } catch (err) {
            csv.destroy(err as Error)
          }
        })()
        reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="batch-${doc.uuid}${request.query.verdict ? `-${request.query.verdict.join('-')}` : ''}.csv"`)
        return reply.code(200).send(csv)
      }
      if (segment !== null)
        throw new HttpProblem(400, 'batch_results.verdict_needs_csv', 'a segment (`verdict`) is a download: ask for it with Accept: text/csv')
      const { limit, offset } = request.query
      const items = offset >= doc.total ? [] : await batchItems(rt.ctx, owner, doc.uuid, offset, limit)
      return reply.code(200).send({
        items: items.map(({ i, ...rest }) => ({
          index: i,
          ...rest,
          verdict: rest.verdict as z.infer<typeof VerdictSchema> | null,
          reason: rest.reason as z.infer<typeof ReasonSchema> | null,
          flags: rest.flags as Array<z.infer<typeof FlagSchema>>
        })),
        total: doc.total,
        limit,
        offset
      })
    }
  })
}

/** Whether an `Accept` header asks for CSV before JSON (RFC 9110 §12.5.1, q-values honoured). */
function prefersCsv(accept: string | undefined): boolean {
  if (!accept) return false
  const ranked = accept
    .split(',')
    .map((part, order) => {
      const [type, ...params] = part
        .trim()
        .toLowerCase()
        .split(';')
        .map(s => s.trim())
      const q = params.find(x => x.startsWith('q='))
      return { type, q: q ? Number(q.slice(2)) : 1, order }
    })
    .filter(r => Number.isFinite(r.q) && r.q > 0)
    .sort((a, b) => b.q - a.q || a.order - b.order)
  for (const r of ranked) {
    if (r.type === 'text/csv') return true
    if (r.type === 'application/json' || r.type === 'application/*' || r.type === '*/*') return false
  }
  return false
}
