import { extname, join } from 'node:path'
import { formatOf, openWriter, readRows, type Layout, type RowWriter } from '../../lists/files.ts'
import { headerRow, mergeRows, VERDICTS, type ListShape, type MergeCounts } from '../../lists/merge.ts'
import type { RunState } from './state.ts'
import type { VerifyFileOptions } from './options.ts'

/** Phase 4: the input streamed again, every row out with its result columns (filtered and split as asked). */
export async function write(o: VerifyFileOptions, state: RunState, layout: Layout): Promise<MergeCounts & { split: Record<string, string> | null }> {
  const shape: ListShape = {
    header: JSON.parse(state.get('header') ?? 'null') as string[] | null,
    column: Number(state.get('column')),
    width: Number(state.get('width'))
  }
  const lines = Number(state.get('lines'))
  const layoutFor = (path: string): Layout => {
    const format = formatOf(path)
    if (format === 'xlsx') return { format: 'xlsx', delimiter: ',', bom: false, newline: '\n' }
    const tab = extname(path).toLowerCase() === '.tsv'
    return layout.format === 'csv' && !tab
      ? { ...layout, format: 'csv' }
      : { format: 'csv', delimiter: tab ? '\t' : layout.format === 'csv' ? layout.delimiter : ',', bom: layout.bom, newline: layout.newline }
  }
  const ext = layout.format === 'xlsx' ? '.xlsx' : layout.format === 'csv' && layout.delimiter === '\t' ? '.tsv' : '.csv'
  const writers: RowWriter[] = []
  const open = async (path: string, header: boolean): Promise<RowWriter> => {
    const w = await openWriter(path, layoutFor(path), { formula_escape: o.formula_escape })
    writers.push(w)
    if (header) await w.write(headerRow(shape))
    return w
  }
  const splits = new Map<string, RowWriter>()
  const splitPaths: Record<string, string> = {}
  const splitFor = async (key: string): Promise<RowWriter> => {
    let w = splits.get(key)
    if (!w) {
      splitPaths[key] = join(o.split!, `${key}${ext}`)
      w = await open(splitPaths[key], true)
      splits.set(key, w)
    }
    return w
  }
  try {
    const all = o.out !== undefined ? await open(o.out, false) : undefined
    if (o.split !== undefined) for (const v of VERDICTS) await splitFor(v)
    const counts = await mergeRows(
      readRows(o.input, layout),
      shape,
      { idOf: key => state.seqOf(key), result: seq => state.result(seq) },
      { all, only: o.only, ...(o.split !== undefined && { split: splitFor }) },
      n => o.onProgress?.('write', n, lines)
    )
    for (const w of writers) await w.close()
    return { ...counts, split: o.split !== undefined ? splitPaths : null }
  } catch (err) {
    for (const w of writers) await w.abort()
    throw err
  }
}
