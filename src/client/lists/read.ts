import { statSync, openSync, readSync, closeSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { ADDRESS_LIKE, addressKey, cellText, readRows, shapeOf, type Layout, type Row } from '../../lists/files.ts'
import type { RunState } from './state.ts'
import type { VerifyFileOptions } from './options.ts'

/** A fingerprint of the input (size, modification time, first 64 KiB): a resumed run refuses a changed file. */
export function fingerprint(path: string): string {
  const st = statSync(path)
  const fd = openSync(path, 'r')
  const head = Buffer.alloc(65_536)
  const n = readSync(fd, head, 0, head.length, 0)
  closeSync(fd)
  return `${st.size}:${Math.round(st.mtimeMs)}:${createHash('sha256').update(head.subarray(0, n)).digest('hex').slice(0, 16)}`
}

const SAMPLE_ROWS = 1_000

/** Phase 1: the rows into the state (unique addresses in order), the header and address column decided from the first rows. */
export async function index(
  state: RunState,
  input: string,
  layout: Layout,
  column: string | undefined,
  progress: VerifyFileOptions['onProgress']
): Promise<void> {
  let sample: Row[] | null = []
  let shape: ReturnType<typeof shapeOf> | null = null
  let rows = 0
  let width = 0
  let unique = 0
  let pending: Row[] = []
  const flush = (): void => {
    state.transaction(() => {
      for (const row of pending) {
        const k = rows++
        width = Math.max(width, row.cells.length)
        if (k === 0 && shape!.header !== null) continue
        if (row.unparsable) continue
        const text = cellText(row.cells[shape!.column] ?? null).trim()
        if (text === '') continue
        if (state.unit(unique, addressKey(text), text, ADDRESS_LIKE.test(text)).added) unique++
      }
    })
    pending = []
    progress?.('read', rows, null)
  }
  for await (const row of readRows(input, layout)) {
    if (sample !== null) {
      sample.push(row)
      if (sample.length < SAMPLE_ROWS) continue
      shape = shapeOf(sample, column)
      pending = sample
      sample = null
      flush()
      continue
    }
    pending.push(row)
    if (pending.length >= 10_000) flush()
  }
  if (sample !== null) {
    shape = shapeOf(sample, column)
    pending = sample
  }
  flush()
  state.set('header', JSON.stringify(shape!.header))
  state.set('column', String(shape!.column))
  state.set('rows', String(rows - (shape!.header !== null ? 1 : 0)))
  state.set('lines', String(rows))
  state.set('width', String(Math.max(width, shape!.header?.length ?? 0)))
  state.set('indexed', '1')
}
