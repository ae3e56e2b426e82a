import { z } from 'zod'
import { MAX_BATCH_EMAIL } from '../../flows/batch-submission/shared/batch-intake.ts'
import { CHECK_NAMES } from '../../domain/checks.ts'
import type { BatchDoc } from '../../projections/batches.ts'
import { ActingEnvironment, FlagSchema, ReasonSchema, Timestamp, VerdictSchema } from '../schemas.ts'

/** A batch as the API shows it: status, progress, aggregated results and tokens (interface "Batches"). */
export const Batch = z
  .object({
    uuid: z.string(),
    name: z.string().nullable(),
    status: z
      .enum(['receiving', 'processing', 'completed'])
      .meta({ description: '`receiving`: intake open; `processing`: intake closed, items pending; `completed`: terminal' }),
    intake: z.enum(['open', 'closed']),
    checks: z.array(z.string()),
    environment: z.enum(['live', 'test']),
    cost_per_item: z.number().meta({ description: 'tokens reserved per unique valid address (0 for test keys)' }),
    progress: z.object({ total: z.number(), processed: z.number(), pending: z.number() }),
    duplicates: z.number().meta({ description: 'addresses dropped as repeats of one already in the batch' }),
    results: z.object({
      by_verdict: z.object({ valid: z.number(), invalid: z.number(), risky: z.number(), unknown: z.number() }),
      by_reason: z.record(z.string(), z.number())
    }),
    tokens: z.object({ reserved: z.number(), captured: z.number(), released: z.number() }),
    created_at: Timestamp,
    closed_at: Timestamp.nullable(),
    completed_at: Timestamp.nullable(),
    source: z
      .object({
        format: z.enum(['csv', 'txt', 'xlsx']),
        bytes: z.number().int(),
        attached_at: Timestamp,
        expires_at: Timestamp
      })
      .nullable()
      .meta({ description: "the list's file kept beside the batch (`GET /api/batches/{uuid}/source` returns it with results), or null" }),
    held: z
      .object({
        reason: z.enum(['egress_blocked']).meta({
          description:
            '`egress_blocked`: this service cannot reach mail servers now (port 25 or DNS blocked on its side); live items wait, their tokens reserved'
        }),
        since: Timestamp,
        until: Timestamp.meta({ description: 'the latest they wait: then they run anyway, and what still cannot be answered ends `unknown` (not charged)' })
      })
      .nullable()
      .meta({ description: 'while live items are held: why, since when and until when at the latest; null otherwise' })
  })
  .meta({ id: 'Batch' })

type BatchView = z.infer<typeof Batch>

/** What the request's chunk did, beside the batch. */
const Chunk = z.object({
  accepted: z.number().meta({ description: 'new unique addresses (invalid ones included)' }),
  duplicates: z.number(),
  invalid: z.number(),
  reserved: z.number().meta({ description: 'tokens reserved for this chunk' })
})

export const Accepted = Batch.extend({ chunk: Chunk }).meta({ id: 'BatchAccepted' })

export const BatchItem = z
  .object({
    index: z.number().meta({ description: 'position of the address in the batch, from 0' }),
    email: z.string().meta({ description: 'the address as submitted (trimmed)' }),
    normalized: z
      .string()
      .nullable()
      .meta({ description: 'the address as asked: its domain in ASCII (IDNA A-labels, RFC 5891); null when its syntax does not hold' }),
    status: z.enum(['pending', 'deferred', 'done']),
    verdict: VerdictSchema.nullable(),
    reason: ReasonSchema.nullable(),
    score: z.number().nullable(),
    flags: z.array(FlagSchema),
    did_you_mean: z.string().nullable(),
    mx_host: z.string().nullable().meta({ description: 'the MX host asked (null when none was, or for results recorded before this field)' }),
    smtp_provider: z.string().nullable().meta({ description: 'the mailbox provider of that host (`google`, `microsoft`, …) when known' }),
    checked_at: Timestamp.nullable().meta({ description: 'when the address was verified; null while pending' })
  })
  .meta({
    id: 'BatchItem',
    examples: [
      {
        index: 0,
        email: 'jane@example.com',
        normalized: 'jane@example.com',
        status: 'done',
        verdict: 'valid',
        reason: 'accepted_email',
        score: 100,
        flags: [],
        did_you_mean: null,
        mx_host: 'mx1.example.com',
        smtp_provider: null,
        checked_at: '2026-11-25T09:00:00.000Z'
      },
      {
        index: 1,
        email: 'jhon@gmial.com',
        normalized: 'jhon@gmial.com',
        status: 'done',
        verdict: 'risky',
        reason: 'low_quality',
        score: 50,
        flags: ['possible_typo', 'free'],
        did_you_mean: 'jhon@gmail.com',
        mx_host: 'mx.gmial.com',
        smtp_provider: null,
        checked_at: '2026-11-25T09:00:01.000Z'
      },
      {
        index: 2,
        email: 'sales@example.org',
        normalized: 'sales@example.org',
        status: 'pending',
        verdict: null,
        reason: null,
        score: null,
        flags: [],
        did_you_mean: null,
        mx_host: null,
        smtp_provider: null,
        checked_at: null
      }
    ]
  })

const Emails = z.array(z.string().max(MAX_BATCH_EMAIL)).meta({
  description: 'addresses; trimmed, kept as sent, de-duplicated on their normalized form (the domain in ASCII); invalid ones become `invalid` at no cost'
})

export const CreateBatch = z
  .object({
    emails: Emails,
    checks: z
      .array(z.string())
      .min(1)
      .max(32)
      .optional()
      .meta({ description: `checks to run (their dependencies are added); all when omitted: ${CHECK_NAMES.join(', ')}` }),
    final: z.boolean().meta({ description: '`false` keeps intake open for more chunks' }),
    name: z.string().max(200).nullable().optional(),
    environment: ActingEnvironment
  })
  .meta({ examples: [{ emails: ['jane@example.com', 'john@example.org'], final: true, name: 'November newsletter' }] })

export const AddChunk = z.object({
  emails: Emails,
  final: z.boolean().optional().meta({ description: '`true` closes intake with this chunk' })
})

export const EstimateRequest = z
  .object({
    addresses: z.number().int().min(0).max(100_000_000).meta({ description: 'unique valid addresses the list holds (invalid ones cost nothing)' }),
    checks: z.array(z.string()).min(1).max(32).optional().meta({ description: 'the checks the batch would run; all the key and plan allow when omitted' }),
    environment: ActingEnvironment
  })
  .meta({ examples: [{ addresses: 12_000 }] })

export const Estimate = z
  .object({
    checks: z.array(z.string()).meta({ description: 'the checks, with their dependencies' }),
    cost_per_address: z.number().int().meta({ description: 'tokens per unique valid address (0 for a test key)' }),
    addresses: z.number().int(),
    cost: z.number().int().meta({
      description:
        'tokens the list would reserve: `addresses × cost_per_address` (an address whose answer is `unknown` is released, so the charge is at most this)'
    }),
    balance: z.number().int().meta({ description: 'tokens available now (live; 0 for a test key: the sandbox has no wallet and costs nothing)' }),
    covered: z.number().int().meta({ description: 'how many of the addresses the balance covers' }),
    max_batch_size: z.number().int().meta({ description: 'unique valid addresses a batch may hold on the plan' }),
    max_chunk_size: z.number().int().meta({ description: 'addresses a request may carry on the plan' })
  })
  .meta({
    id: 'BatchEstimate',
    examples: [
      {
        checks: ['syntax', 'dns', 'smtp'],
        cost_per_address: 8,
        addresses: 12_000,
        cost: 96_000,
        balance: 20_000,
        covered: 2_500,
        max_batch_size: 10_000,
        max_chunk_size: 2_000
      }
    ]
  })

/** The public view of a batch. */
export function batchView(b: BatchDoc): BatchView {
  const v = b.by_verdict
  return {
    uuid: b.uuid,
    name: b.name,
    status: b.status,
    intake: b.status === 'receiving' ? 'open' : 'closed',
    checks: b.checks,
    environment: b.environment,
    cost_per_item: b.cost_per_item,
    progress: { total: b.total, processed: b.processed, pending: b.total - b.processed },
    duplicates: b.duplicates,
    results: { by_verdict: { valid: v.valid ?? 0, invalid: v.invalid ?? 0, risky: v.risky ?? 0, unknown: v.unknown ?? 0 }, by_reason: b.by_reason },
    tokens: b.tokens,
    created_at: b.created_at,
    closed_at: b.closed_at,
    completed_at: b.completed_at,
    source: b.source ? { format: b.source.format, bytes: b.source.bytes, attached_at: b.source.attached_at, expires_at: b.source.expires_at } : null,
    held: b.status === 'completed' ? null : (b.held ?? null)
  }
}
