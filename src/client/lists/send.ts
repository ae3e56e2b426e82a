import { basename } from 'node:path'
import type { ApiClient } from '../api.ts'
import type { RunState, Part } from './state.ts'
import type { VerifyFileOptions } from './options.ts'
import { ListError, call } from './call.ts'

/** The part sending goes on in: the last one if its batch still takes chunks (its count set to what the batch holds), else none. */
async function openPart(api: ApiClient, o: VerifyFileOptions, state: RunState): Promise<Part | null> {
  const last = state.parts().at(-1)
  if (!last || last.final || last.batch_uuid === 'local') return null
  const b = await call(
    'reading the batch',
    o.api_url,
    async () => await api.GET('/api/batches/{uuid}', { params: { path: { uuid: last.batch_uuid }, query: { wait: 0 } } }),
    { signal: o.signal }
  )
  // A chunk whose answer was lost (a kill, a dropped connection) is in the batch: count it.
  const part = { ...last, count: b.progress.total, final: b.intake === 'closed' }
  state.savePart(part)
  return part.final ? null : part
}

/** Phase 3a: the unique addresses from where the parts end up to `endSeq`, in chunks, a new batch when one is full or closed. */
export async function send(api: ApiClient, o: VerifyFileOptions, state: RunState, endSeq: number, chunkSize: number, maxBatch: number): Promise<void> {
  let part = await openPart(api, o, state)
  let seq = state.sentUpTo()
  let size = chunkSize
  const name = o.name ?? basename(o.input)
  while (seq < endSeq) {
    if (o.signal?.aborted) throw new ListError('stopped (interrupted): run again with --resume to go on')
    // A batch holds at most `maxBatch` valid addresses: the chunk stops where its batch would be full.
    const room = maxBatch - (part === null ? 0 : state.validFrom(part.first) - state.validFrom(part.first + part.count))
    const chunk: Array<{ seq: number; email: string; valid: boolean }> = []
    let validIn = 0
    for (const a of state.addressesFrom(seq, Math.min(size, endSeq - seq))) {
      if (a.valid && validIn === room) break
      if (a.valid) validIn++
      chunk.push(a)
    }
    const last = chunk[chunk.length - 1].seq + 1
    const final = last >= endSeq || validIn >= room
    const emails = chunk.map(a => a.email)
    try {
      if (part === null) {
        const since = Date.now()
        // A creation is not retried blindly (a lost answer would make two batches): only a 429, which changed nothing; a lost one is looked for.
        const created = await call(
          'sending the list',
          o.api_url,
          async () => await api.POST('/api/batches', { body: { emails, final, name, ...(o.checks && { checks: o.checks }) } }),
          { signal: o.signal, retryOn: status => status === 429 }
        ).catch(async (err: unknown) => (await adoptLost(api, o, name, since, emails.length)) ?? Promise.reject(err))
        part = { n: state.parts().length, batch_uuid: created.uuid, first: seq, count: created.progress.total, final: created.intake === 'closed' || final }
      } else {
        const open = part
        const added = await call(
          'sending the list',
          o.api_url,
          async () => await api.POST('/api/batches/{uuid}/emails', { params: { path: { uuid: open.batch_uuid } }, body: { emails, final } }),
          { signal: o.signal }
        )
        part = { ...part, count: added.progress.total, final: added.intake === 'closed' }
      }
    } catch (err) {
      if (err instanceof ListError && /\.too_many$/.test(err.code ?? '') && size > 1) {
        size = Math.max(1, Math.floor(size / 2))
        continue
      }
      if (err instanceof ListError && err.code === 'create_batch.all_rejected') {
        // Not one address of the chunk is valid: the service said so; they are invalid here, at no cost.
        state.transaction(() => {
          for (const a of chunk)
            state.saveResult(a.seq, {
              verdict: 'invalid',
              reason: 'invalid_syntax',
              score: 0,
              flags: '',
              did_you_mean: null,
              mx_host: null,
              smtp_provider: null,
              checked_at: null
            })
        })
        state.savePart({ n: state.parts().length, batch_uuid: 'local', first: seq, count: chunk.length, final: true })
        seq = last
        continue
      }
      // The batch took no more (its intake closed meanwhile, or it is full by the service's count): the rest goes to a new one.
      if (err instanceof ListError && part !== null && (err.code === 'add_chunk.intake_closed' || err.code === 'add_chunk.max_batch_size')) {
        state.savePart({ ...part, final: true })
        part = null
        continue
      }
      throw err
    }
    if (part.first + part.count !== last)
      throw new ListError(
        `the batch ${part.batch_uuid} holds ${part.count} addresses where ${last - part.first} were sent: the service merged addresses this client kept apart; the results cannot be matched to rows safely`
      )
    state.savePart(part)
    seq = last
    if (part.final) part = null
    o.onProgress?.('verify', state.results(), state.units())
  }
}

/**
 * A batch created by a request whose answer was lost (a dropped connection, a 5xx): one
 * named `name`, created since `since`, holding `count` addresses. Null when there is none
 * (the request did not land: it is sent again).
 */
async function adoptLost(
  api: ApiClient,
  o: VerifyFileOptions,
  name: string,
  since: number,
  count: number
): Promise<{ uuid: string; progress: { total: number }; intake: 'open' | 'closed' } | null> {
  const recent = await call('looking for the batch', o.api_url, async () => await api.GET('/api/batches', { params: { query: { limit: 5 } } })).catch(
    () => null
  )
  return recent?.items.find(b => b.name === name && Date.parse(b.created_at) >= since - 5_000 && b.progress.total === count) ?? null
}
