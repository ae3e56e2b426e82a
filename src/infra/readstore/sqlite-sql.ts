// The SQL the SQLite read store builds from a collection's declaration and a query: pure
// functions, no connection (identifiers are checked, values always go as parameters).
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

/** The SQL of a `where` (AND of each field's condition) and its parameters; fields are checked against the spec. */
export function whereSql(spec: CollectionSpec, where: Where | undefined): { sql: string; params: SQLInputValue[] } {
  const parts: string[] = []
  const params: SQLInputValue[] = []
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
      parts.push(`${f} = ?`)
      params.push(column(c))
      continue
    }
    if ('in' in c) {
      const values = c.in.filter(v => v !== null)
      const ors = [...(values.length > 0 ? [`${f} IN (${values.map(() => '?').join(', ')})`] : []), ...(c.in.includes(null) ? [`${f} IS NULL`] : [])]
      parts.push(ors.length > 0 ? `(${ors.join(' OR ')})` : '0')
      params.push(...values.map(column))
      continue
    }
    if ('prefix' in c) {
      parts.push(`${f} >= ? AND ${f} < ?`)
      params.push(c.prefix, `${c.prefix}\uffff`)
      continue
    }
    if (c.gte !== undefined) {
      parts.push(`${f} >= ?`)
      params.push(c.gte)
    }
    if (c.lte !== undefined) {
      parts.push(`${f} <= ?`)
      params.push(c.lte)
    }
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
