import { DomainError, type Environment } from '../../../domain/shared.ts'
import * as batch from '../../../domain/batch/decider.ts'
import type { BatchItem } from '../../../domain/batch/events.ts'
import { CHECK_NAMES, isCheckName, resolveChecks, type CheckName } from '../../../domain/checks.ts'
import type { Plan } from '../../../domain/plans.ts'
import type { EventMetadata } from '../../../ports/event-store.ts'
import { createHmac } from 'node:crypto'
import { keyObjectOf } from '../../../lib/crypto/hashing.ts'
import { faultPoint } from '../../../lib/faults.ts'
import { turnIfDue } from '../../../lib/turns.ts'
import { parseAddress } from '../../../verifier/syntax.ts'
import type { CommandContext } from '../../../commands/context.ts'
import type { Loaded } from '../../../eventsourcing/command-handler.ts'
import { batches } from '../../../commands/batch/aggregate.ts'
import { wallets } from '../../../commands/wallet/aggregate.ts'

/** Who submits a batch: the account, the credential's environment and key or agent, its enabled checks and the account's plan. */
export interface BatchSubmitter {
  user_uuid: string
  environment: Environment
  /**
   * Whose batches it sees (issue 42 item 10): a key its own environment's, an agent or
   * OAuth client the live ones; absent or null, both (a session). Another environment's
   * batch is "not found" to it.
   */
  sees?: Environment | null
  key_uuid: string | null
  agent_uuid: string | null
  enabled_checks: readonly string[]
  plan: Pick<Plan, 'max_batch_size' | 'max_chunk_size' | 'allowed_checks'>
}

/** What a chunk did: items accepted (unique, invalid ones included), duplicates dropped, invalid addresses, tokens reserved. */
export interface ChunkOutcome {
  batch_uuid: string
  accepted: number
  duplicates: number
  invalid: number
  reserved: number
  /** Global position of the append (read-your-writes). */
  position: number
}

/** Longest address text in a batch (characters): longer text is a 400, like a job's. */
export const MAX_BATCH_EMAIL = 1024

/** Attempts at a chunk whose batch changed between the read and the append (another chunk came first). */
const CHUNK_ATTEMPTS = 8

const metaOf = (by: BatchSubmitter, batchUuid: string): Partial<EventMetadata> => ({
  actor: by.key_uuid ?? by.agent_uuid ?? by.user_uuid,
  correlation_id: batchUuid
})

/** The batch's blind index of an address (64 bits of HMAC-SHA-256 with the index key): equal addresses, equal hashes; nothing about the address otherwise. */
function blindIndex(ctx: CommandContext, batchUuid: string, key: string): string {
  // A string of its own (not a slice of the whole digest's hex, which a slice would keep alive): a batch holds a million.
  return createHmac('sha256', keyObjectOf(ctx.secrets.index_key)).update(`batch\n${batchUuid}\n${key}`).digest().toString('hex', 0, 8)
}

/**
 * An address of a list: kept as sent (trimmed), so that results give the customer back the
 * address they submitted (`bücherpost.net`, not its A-labels); its normalized form (the
 * domain in ASCII, RFC 5891) is the de-duplication key when its syntax holds.
 */
interface Candidate {
  text: string
  key: string
  invalid: boolean
}

/** The list's addresses parsed (RFC 5321/6531 syntax), in order; the event loop gets a turn every 10 ms of it (a plan's chunk is 50,000). */
export async function candidates(emails: readonly string[]): Promise<Candidate[]> {
  const out: Candidate[] = []
  for (const raw of emails) {
    const text = raw.trim()
    const parsed = parseAddress(text)
    out.push(parsed.ok ? { text, key: parsed.normalized, invalid: false } : { text, key: `invalid\n${text}`, invalid: true })
    await turnIfDue()
  }
  return out
}

/**
 * A batch's checks with their dependencies, checked against the key and the plan
 * (interface "Batches": 403 for a check the plan does not allow); without a list, every
 * check the key and the plan allow.
 * @throws DomainError invalid `create_batch.invalid_checks`; forbidden `create_batch.check_not_allowed`.
 */
export function checksFor(by: BatchSubmitter, requested: readonly string[] | undefined): CheckName[] {
  if (requested && !requested.every(isCheckName))
    throw new DomainError('invalid', 'create_batch.invalid_checks', `checks must be among: ${CHECK_NAMES.join(', ')}`)
  // Without a list: every check the key and the plan allow.
  const checks =
    requested && requested.length > 0
      ? resolveChecks(requested as CheckName[])
      : resolveChecks(CHECK_NAMES.filter(c => by.enabled_checks.includes(c) && by.plan.allowed_checks.includes(c)))
  const refused = checks.filter(c => !by.enabled_checks.includes(c) || !by.plan.allowed_checks.includes(c))
  if (refused.length > 0) throw new DomainError('forbidden', 'create_batch.check_not_allowed', `the plan or this key does not allow: ${refused.join(', ')}`)
  return checks
}

/**
 * The chunk's items against the batch as loaded: de-duplicated, sealed, reserved on the
 * wallet (one reservation per chunk, `job_uuid` the chunk's uuid), then appended with the
 * expected revision of that read. When another chunk came first, the reservation is
 * released and the chunk decided again on the new state. Should this process die between
 * the reservation and the append, the intake process manager abandons the chunk and
 * releases the reservation. Fault point: `batch.after_reserve`.
 */
export async function acceptChunk(
  ctx: CommandContext,
  by: BatchSubmitter,
  batchUuid: string,
  listed: readonly Candidate[],
  final: boolean,
  first: Loaded<batch.BatchState>,
  creation?: CreateData
): Promise<ChunkOutcome> {
  const meta = metaOf(by, batchUuid)
  let loaded = first
  for (let attempt = 1; ; attempt++) {
    // A batch being created is decided on as it will be once created.
    const s = creation ? batch.evolve(batch.initialState(), batch.decide({ type: 'CreateBatch', data: creation }, batch.initialState())[0]) : loaded.state
    if (s.status === 'none') throw new DomainError('not_found', 'batch.not_found', 'no such batch')
    const chosen = new Map<string, Candidate & { hash: string }>()
    let duplicates = 0
    for (const c of listed) {
      const hash = blindIndex(ctx, batchUuid, c.key)
      await turnIfDue()
      if (chosen.has(hash) || (s.status === 'receiving' && batch.holds(s, hash))) {
        duplicates++
        continue
      }
      chosen.set(hash, { ...c, hash })
    }
    const items: BatchItem[] = []
    for (const c of chosen.values()) {
      items.push({ email: await ctx.sealer.seal(by.user_uuid, c.text), hash: c.hash, ...(c.invalid && { invalid: true as const }) })
      await turnIfDue()
    }
    const valid = batch.validCount(items)
    if (s.status === 'receiving') batch.requireWithinSize(s, valid, by.plan.max_batch_size)
    const chunkUuid = ctx.newId()
    const amount = valid * s.cost_per_item
    const now = ctx.now().toISOString()
    let reservation: string | null = null
    if (amount > 0) {
      reservation = ctx.newId()
      try {
        await wallets.handle(
          ctx,
          by.user_uuid,
          { type: 'ReserveTokens', data: { user_uuid: by.user_uuid, job_uuid: chunkUuid, reservation_uuid: reservation, amount, batch_uuid: batchUuid, now } },
          { ...meta, causation_id: chunkUuid }
        )
      } catch (err) {
        if (err instanceof DomainError && err.code === 'submit_job.insufficient_tokens')
          throw new DomainError(
            'payment_required',
            'add_chunk.insufficient_tokens',
            `${valid} addresses at ${s.cost_per_item} tokens cost ${amount}; the wallet holds ${err.facts.balance}`,
            err.facts
          )
        throw err
      }
      faultPoint(ctx.config.fault_point, 'batch.after_reserve')
    }
    try {
      const chunk = {
        chunk_uuid: chunkUuid,
        environment: by.environment,
        items,
        duplicates,
        reservation_uuid: reservation,
        amount,
        max_batch_size: by.plan.max_batch_size,
        final,
        now
      }
      const r = await batches.handle(
        ctx,
        batchUuid,
        creation ? { type: 'CreateBatch', data: { ...creation, first_chunk: chunk } } : { type: 'AddChunk', data: chunk },
        meta,
        { known: loaded }
      )
      return { batch_uuid: batchUuid, accepted: items.length, duplicates, invalid: items.length - valid, reserved: amount, position: r.position }
    } catch (err) {
      if (reservation !== null) {
        await wallets.handle(
          ctx,
          by.user_uuid,
          {
            type: 'ReleaseTokens',
            data: { user_uuid: by.user_uuid, job_uuid: chunkUuid, reservation_uuid: reservation, reason: 'chunk_not_accepted', now: ctx.now().toISOString() }
          },
          meta
        )
      }
      if (!(err instanceof DomainError && err.code === 'add_chunk.changed') || attempt >= CHUNK_ATTEMPTS) throw err
      loaded = await batches.load(ctx, batchUuid)
    }
  }
}

export type CreateData = Extract<batch.BatchCommand, { type: 'CreateBatch' }>['data']
