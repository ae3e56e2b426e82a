// The SQL the read stores build from a collection's declaration and a query (the `where`
// shared with the PostgreSQL store through its dialect): pure functions, no connection (identifiers are checked, values always go as parameters).
import type { SQLInputValue } from 'node:sqlite'
import type { CollectionSpec, Condition, Where } from '../../ports/read-store.ts'

/** A table or column name this module may splice into SQL: lower case letters, digits and underscores. */
const IDENT = /^[a-z][a-z0-9_]*$/

/** `s` when it is a safe identifier. @throws Error otherwise (never reached by a declared collection). */
export const ident = (s: string): string => {
  if (!IDENT.test(s)) throw new Error(`not a safe identifier: ${s}`)
  return s
}
/** A document field as stored in its column. */
export function column(value: unknown): SQLInputValue {
  if (value === undefined || value === null) return null
  if (typeof value === 'boolean') return value ? 1 : 0
  if (typeof value === 'number' || typeof value === 'string') return value
  return JSON.stringify(value)
}

/** How a store writes a `where`: its parameters' placeholders, its stored form of a field's value, and its false. */
export interface WhereDialect<V> {
  /** The placeholder of the `n`th parameter (1-based): `?` in SQLite, `$n` in PostgreSQL. */
  param: (n: number) => string
  /** A field's value as its column holds it. */
  column: (value: unknown) => V
  /** An always-false condition (an `in` of nothing). */
  none: string
}

/** SQLite: `?` placeholders, booleans as 0 and 1. */
const SQLITE: WhereDialect<SQLInputValue> = { param: () => '?', column, none: '0' }

/**
 * The SQL of a `where` (AND of each field's condition) and its parameters, for a store's
 * dialect (SQLite's by default); fields are checked against the spec, values always go as
 * parameters. Shared by the SQLite and PostgreSQL read stores.
 */
export function whereSql<V = SQLInputValue>(
  spec: CollectionSpec,
  where: Where | undefined,
  dialect: WhereDialect<V> = SQLITE as unknown as WhereDialect<V>
): { sql: string; params: Array<V | string | number> } {
  const parts: string[] = []
  const params: Array<V | string | number> = []
  const p = (v: V | string | number): string => {
    params.push(v)
    return dialect.param(params.length)
  }
  for (const [field, cond] of Object.entries(where ?? {})) {
    if (cond === undefined) continue
    const f = field === '_id' ? '_id' : field in spec.fields ? ident(field) : null
    if (f === null) throw new Error(`${spec.name}: ${field} is not a queryable field`)
    const c = cond as Condition
    if (c === null) {
      parts.push(`${f} IS NULL`)
      continue
    }
    if (typeof c !== 'object') {
      parts.push(`${f} = ${p(dialect.column(c))}`)
      continue
    }
    if ('in' in c) {
      const values = c.in.filter(v => v !== null)
      const ors = [
        ...(values.length > 0 ? [`${f} IN (${values.map(v => p(dialect.column(v))).join(', ')})`] : []),
        ...(c.in.includes(null) ? [`${f} IS NULL`] : [])
      ]
      parts.push(ors.length > 0 ? `(${ors.join(' OR ')})` : dialect.none)
      continue
    }
    if ('prefix' in c) {
      parts.push(`${f} >= ${p(c.prefix)} AND ${f} < ${p(`${c.prefix}\uffff`)}`)
      continue
    }
    if (c.gte !== undefined) parts.push(`${f} >= ${p(c.gte)}`)
    if (c.lte !== undefined) parts.push(`${f} <= ${p(c.lte)}`)
  }
  return { sql: parts.length > 0 ? ` WHERE ${parts.join(' AND ')}` : '', params }
}

/** ` INDEXED BY <index>` for a declared index named by its fields (empty without one). */
export function indexedBy(spec: CollectionSpec, table: string, fields: readonly string[] | undefined): string {
  if (fields === undefined) return ''
  const i = spec.indexes.findIndex(ix => ix.length === fields.length && ix.every((f, k) => f === fields[k]))
  if (i < 0) throw new Error(`${spec.name}: no index on ${fields.join(', ')}`)
  return ` INDEXED BY ${table}_i${i}`
}
