import type { Collection, Doc, FindOptions, ReadStore } from './port.ts'

function matches (doc: Doc, filter: Record<string, unknown>): boolean {
  for (const [k, v] of Object.entries(filter)) {
    if (v === undefined) continue
    if (Array.isArray(v) ? !v.includes(doc[k]) : doc[k] !== v) return false
  }
  return true
}

function compare (a: unknown, b: unknown): number {
  if (a === b) return 0
  if (a === null || a === undefined) return -1
  if (b === null || b === undefined) return 1
  return (a as number | string) < (b as number | string) ? -1 : 1
}

class MemoryCollection<T extends Doc> implements Collection<T> {
  private readonly docs = new Map<string, T>()

  async get (id: string): Promise<T | null> {
    const d = this.docs.get(id)
    return d ? structuredClone(d) : null
  }

  /** Idempotent like the MongoDB adapter: a document with `revision`/`position` replaces only an older one. */
  async put (doc: T): Promise<void> {
    const old = this.docs.get(doc._id)
    for (const guard of ['revision', 'position'] as const) {
      if (typeof doc[guard] === 'number') {
        if (old && typeof old[guard] === 'number' && (old[guard] as number) >= (doc[guard] as number)) return
        break
      }
    }
    this.docs.set(doc._id, structuredClone(doc))
  }

  async delete (id: string): Promise<void> { this.docs.delete(id) }

  async find (filter: Record<string, unknown>, options: FindOptions = {}): Promise<{ items: T[], total: number }> {
    const all = [...this.docs.values()].filter(d => matches(d, filter))
    const sort = Object.entries(options.sort ?? {})
    if (sort.length > 0) {
      const last = sort[sort.length - 1][1]
      all.sort((a, b) => {
        for (const [field, dir] of sort) {
          const c = compare(a[field], b[field])
          if (c !== 0) return c * dir
        }
        return compare(a._id, b._id) * last
      })
    }
    const offset = options.offset ?? 0
    const items = all.slice(offset, options.limit === undefined ? undefined : offset + options.limit)
    return { items: items.map(d => structuredClone(d)), total: all.length }
  }

  async findOne (filter: Record<string, unknown>): Promise<T | null> {
    for (const d of this.docs.values()) if (matches(d, filter)) return structuredClone(d)
    return null
  }
}

/** In-memory read store (embedded default): not durable, rebuilt from the event store at start. */
export class MemoryReadStore implements ReadStore {
  readonly durable = false
  private readonly collections = new Map<string, MemoryCollection<Doc>>()
  private readonly checkpoints = new Map<string, number>()

  collection<T extends Doc> (name: string): Collection<T> {
    let c = this.collections.get(name)
    if (!c) { c = new MemoryCollection<Doc>(); this.collections.set(name, c) }
    return c as unknown as Collection<T>
  }

  async getCheckpoint (projection: string): Promise<number> { return this.checkpoints.get(projection) ?? 0 }
  async setCheckpoint (projection: string, position: number): Promise<void> {
    this.checkpoints.set(projection, Math.max(position, this.checkpoints.get(projection) ?? 0))
  }
  async close (): Promise<void> {}
}
