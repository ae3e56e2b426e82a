import { posix } from 'node:path'
import { StringDecoder } from 'node:string_decoder'
import type { Entry, ZipFile } from 'yauzl'
import { SaxesParser, type SaxesTagPlain } from 'saxes'
import { ListFileError, type FileLimits } from './file-limits.ts'

// The XML parts of an XLSX package (ECMA-376 Part 2, Open Packaging Conventions) read with
// saxes within the file's bounds: depth, the length of a token; relationships resolved.

/** What a part's reader does with its elements (the depth counts from 1 at the root). */
export interface SaxHandlers {
  open?: (tag: SaxesTagPlain, depth: number) => void
  close?: (tag: SaxesTagPlain, depth: number) => void
  text?: (text: string) => void
}

/** Reads the part named `name` whole through `sax` (the workbook's parts, found by their lower-cased names). */
export type Read = (name: string, sax: SaxHandlers) => Promise<void>

/**
 * Streams one part through saxes, pausing after each inflated chunk (the caller takes
 * what the handlers gathered, then asks for more): at most `depth` nested elements, at
 * most `token_chars` characters between two events (text, a tag and its attributes).
 * @throws ListFileError `malformed_file`, `too_deep`, `cell_too_large`.
 */
export async function* parsePart(zip: ZipFile, entry: Entry, sax: SaxHandlers, limits: FileLimits): AsyncGenerator<void> {
  if (entry.isEncrypted()) throw new ListFileError('malformed_file', 'the workbook is encrypted: save it without a password')
  let stream: NodeJS.ReadableStream & { destroy(): void }
  try {
    stream = (await zip.openReadStreamPromise(entry)) as typeof stream
  } catch (err) {
    throw new ListFileError('malformed_file', `the part ${entry.fileName} cannot be read (${(err as Error).message})`)
  }
  const parser = new SaxesParser<{ position: true; xmlns: false }>({ position: true, xmlns: false })
  let depth = 0
  let lastEvent = 0
  const mark = (): void => {
    lastEvent = parser.position
  }
  let failure: Error | null = null
  parser.on('error', err => {
    failure ??= new ListFileError('malformed_file', `the part ${entry.fileName} is not well-formed XML (${err.message})`)
  })
  parser.on('opentag', tag => {
    mark()
    if (++depth > limits.depth) throw new ListFileError('too_deep', `the part ${entry.fileName} nests elements more than ${limits.depth} deep`)
    sax.open?.(tag, depth)
  })
  parser.on('closetag', tag => {
    mark()
    sax.close?.(tag, depth)
    depth--
  })
  parser.on('text', text => {
    mark()
    sax.text?.(text)
  })
  parser.on('cdata', text => {
    mark()
    sax.text?.(text)
  })
  const decoder = new StringDecoder('utf8')
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      parser.write(decoder.write(chunk))
      if (failure) throw failure
      if (parser.position - lastEvent > limits.token_chars)
        throw new ListFileError('cell_too_large', `the part ${entry.fileName} holds a cell or tag longer than ${limits.token_chars} characters`)
      yield
    }
    parser.write(decoder.end())
    parser.close()
    if (failure) throw failure
  } catch (err) {
    if (err instanceof ListFileError) throw err
    throw new ListFileError('malformed_file', `the part ${entry.fileName} cannot be read (${(err as Error).message})`)
  } finally {
    stream.destroy()
  }
}

/** Reads a whole part through `sax`. */
export async function parseWhole(zip: ZipFile, entry: Entry, sax: SaxHandlers, limits: FileLimits): Promise<void> {
  for await (const _ of parsePart(zip, entry, sax, limits));
}

/** An attribute by its local name, whatever its namespace prefix (`r:id`, `relationships:id`). */
export function attribute(tag: SaxesTagPlain, local: string, prefixed = false): string | undefined {
  for (const [name, value] of Object.entries(tag.attributes)) {
    const colon = name.indexOf(':')
    if ((prefixed ? colon >= 0 : colon < 0) && name.slice(colon + 1) === local) return value
  }
  return undefined
}

/** The local name of an element (`x:row` and `row` alike). */
export const local = (tag: SaxesTagPlain): string => tag.name.slice(tag.name.indexOf(':') + 1)

/** A package's relationships (`.rels`), their targets resolved against `base`; none when the part is absent. */
export async function relationships(
  read: Read,
  parts: Map<string, Entry>,
  path: string,
  base: string
): Promise<Array<{ id: string; type: string; target: string }>> {
  if (!parts.has(path.toLowerCase())) return []
  const found: Array<{ id: string; type: string; target: string }> = []
  await read(path, {
    open: tag => {
      if (local(tag) !== 'Relationship' || attribute(tag, 'TargetMode') === 'External') return
      const target = attribute(tag, 'Target') ?? ''
      const resolved = target.startsWith('/') ? target.slice(1) : posix.normalize(posix.join(base, target))
      found.push({ id: attribute(tag, 'Id') ?? '', type: attribute(tag, 'Type') ?? '', target: resolved.replace(/^(\.\.\/)+/, '') })
    }
  })
  return found
}
