// An operation tested without a port, in the shape of Emmett's ApiSpecification: given
// events already on streams, when an operation runs (a command file's function, or a flow's
// first step with its reaction run inline), then the new events per stream — on the real
// write side (SQLite files, the command handler, the sealer) with the read models rebuilt
// from the given events, and no HTTP server.
import type { Test } from 'tap'
import type { CommandContext } from '../../src/commands/context.ts'
import { openCore, type Core } from '../../src/core.ts'
import { rebuildProjections } from '../../src/eventsourcing/rebuild.ts'
import { PROJECTIONS } from '../../src/projections/index.ts'
import type { RecordedEvent } from '../../src/ports/event-store.ts'
import { testConfig } from './service.ts'

/** An event as a spec states it: its type and the fields of its data that matter (compared with `t.match`). */
interface SpecEvent {
  type: string
  data?: Record<string, unknown>
}

/** Streams and their events, `{ 'apikeys-<uuid>': [{ type, data }] }`. */
type Streams = Record<string, SpecEvent[]>

/**
 * `commandSpec(t).given(streams).when(ctx => operation(ctx, …)).then(newEvents)`:
 * - `given`: events appended to each stream first (with `data` as given; `occurred_at` the spec's clock);
 * - the read models are rebuilt from the given events before `when` (an operation that reads
 *   one, a plan or an account by e-mail, sees them as the service would);
 * - `then(expected)`: exactly these streams got new events, of these types in this order,
 *   each with at least these data fields; resolves with what the operation returned;
 * - `thenThrows(code)`: the operation refused with that code, and no stream got an event.
 * The context is the service's own (`openCore` on a fresh DATA_DIR), closed at the test's end.
 */
export function commandSpec(t: Test, options: { now?: Date } = {}) {
  const now = options.now ?? new Date('2026-11-29T10:00:00.000Z')
  let core: Promise<Core> | null = null
  const open = async (): Promise<Core> => {
    core ??= openCore(testConfig(t.testdir()), { now: () => now }).then(c => {
      t.teardown(() => c.close())
      return c
    })
    return await core
  }
  return {
    given: (streams: Streams) => ({
      when: <R>(operation: (ctx: CommandContext) => Promise<R>) => {
        const run = async (): Promise<{ result: Promise<R>; newEvents: () => Promise<RecordedEvent[]> }> => {
          const c = await open()
          for (const [stream, events] of Object.entries(streams))
            await c.store.append(
              stream,
              events.map(e => ({ type: e.type, data: e.data ?? {}, metadata: { occurred_at: now.toISOString(), actor: 'spec' } })),
              { expected_revision: 'any' }
            )
          await rebuildProjections(c.store, c.ctx.reads, PROJECTIONS)
          const before = await c.store.headPosition()
          const result = operation(c.ctx)
          return { result, newEvents: async () => await c.store.readAll({ from_position: before, max_count: 10_000 }) }
        }
        return {
          then: async (expected: Streams, message = 'the operation appends the expected events'): Promise<R> => {
            const { result, newEvents } = await run()
            const value = await result
            const got: Record<string, RecordedEvent[]> = {}
            for (const e of await newEvents()) (got[e.stream] ??= []).push(e)
            t.same(Object.keys(got).sort(), Object.keys(expected).sort(), `${message}: these streams and no other`)
            for (const [stream, events] of Object.entries(expected)) {
              t.same(
                (got[stream] ?? []).map(e => e.type),
                events.map(e => e.type),
                `${message}: ${stream}`
              )
              events.forEach((e, i) => {
                if (e.data) t.match(got[stream]?.[i]?.data, e.data, `${message}: ${stream} ${e.type} #${i}`)
              })
            }
            return value
          },
          thenThrows: async (code: string, message = `refused with ${code}`): Promise<void> => {
            const { result, newEvents } = await run()
            await t.rejects(result, { code }, message)
            t.same(await newEvents(), [], `${message}, appending nothing`)
          }
        }
      }
    })
  }
}
