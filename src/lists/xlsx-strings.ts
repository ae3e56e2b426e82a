import { ListFileError, type FileLimits } from './file-limits.ts'
import { local, type Read } from './xlsx-xml.ts'

// The shared strings of an XLSX workbook (ECMA-376 Part 1 §18.4), held compactly within
// the file's bounds, and the text of a string item (shared or inline).

/**
 * The shared strings, held compactly: 4,096 strings joined per segment, each string's
 * end in one typed array (a million strings cost their characters and 4 MB, not a
 * million string headers). Bounded by `shared_chars` and `shared_count`.
 */
export class StringTable {
  private readonly segments: string[] = []
  private pending: string[] = []
  private ends = new Uint32Array(1_024)
  private pendingChars = 0
  private chars = 0
  count = 0
  private readonly limits: FileLimits
  constructor(limits: FileLimits) {
    this.limits = limits
  }

  add(text: string): void {
    this.chars += text.length
    if (this.count + 1 > this.limits.shared_count || this.chars > this.limits.shared_chars)
      throw new ListFileError(
        'expands_too_much',
        `the workbook's shared strings exceed ${this.limits.shared_count} strings or ${this.limits.shared_chars} characters: save it as CSV`
      )
    if (this.count >= this.ends.length) {
      const grown = new Uint32Array(this.ends.length * 2)
      grown.set(this.ends)
      this.ends = grown
    }
    this.pendingChars += text.length
    this.ends[this.count++] = this.pendingChars
    this.pending.push(text)
    if (this.pending.length === 4_096) this.seal()
  }

  /** Closes the segment being filled (join makes one flat string, not a rope of 4,096). */
  seal(): void {
    if (this.pending.length === 0) return
    const joined = this.pending.join('')
    this.segments.push(joined)
    this.pending = []
    this.pendingChars = 0
  }

  /** The string at `i`, or undefined beyond the table. */
  get(i: number): string | undefined {
    if (!Number.isInteger(i) || i < 0 || i >= this.count) return undefined
    const segment = i >>> 12
    const text = this.segments[segment]
    const start = (i & 4_095) === 0 ? 0 : this.ends[i - 1]
    return text.slice(start, this.ends[i])
  }
}

/** The text of a string item (`si`, `is`): its `t` elements, run by run; phonetic runs (`rPh`) left out (§18.4.8). */
export function stringItemCollector(): { open: (name: string) => void; close: (name: string) => void; text: (t: string) => void; take: () => string } {
  let parts: string[] = []
  let inT = false
  let inPhonetic = 0
  return {
    open: name => {
      if (name === 'rPh') inPhonetic++
      else if (name === 't' && inPhonetic === 0) inT = true
    },
    close: name => {
      if (name === 'rPh') inPhonetic--
      else if (name === 't') inT = false
    },
    text: t => {
      if (inT) parts.push(t)
    },
    take: () => {
      const text = parts.join('')
      parts = []
      return text
    }
  }
}

export async function sharedStringsOf(read: Read, path: string, limits: FileLimits): Promise<StringTable> {
  const table = new StringTable(limits)
  const item = stringItemCollector()
  let inItem = false
  await read(path, {
    open: tag => {
      const name = local(tag)
      if (name === 'si') inItem = true
      else if (inItem) item.open(name)
    },
    close: tag => {
      const name = local(tag)
      if (name === 'si') {
        inItem = false
        table.add(item.take())
      } else if (inItem) item.close(name)
    },
    text: t => {
      if (inItem) item.text(t)
    }
  })
  table.seal()
  return table
}
