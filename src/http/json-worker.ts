import sjson from 'secure-json-parse'

/**
 * The thread that parses large JSON bodies (see `plugins/json-body.ts`): the body's bytes
 * come transferred, the value goes back by structured clone — except a top-level array of
 * a thousand strings or more (a batch's `emails`), which goes back as one string joined by
 * NUL (its strings cannot hold one: JSON may escape it, and then the array is sent as it
 * is), so that the main thread copies one string and splits it rather than rebuilds fifty
 * thousand.
 */

/** A parsed body: its value, with the arrays named in `joined` replaced by null. */
export interface ParsedBody {
  value: unknown
  joined: Array<{ key: string; text: string }>
}

const SEPARATOR = '\u0000'
const JOIN_AT = 1_000

/** @throws SyntaxError for text that is not JSON, or holds `__proto__` or `constructor.prototype` (as Fastify's own parser). */
export default function parseBody(bytes: Uint8Array): ParsedBody {
  const value = sjson.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'), undefined, {
    protoAction: 'error',
    constructorAction: 'error'
  }) as unknown
  const joined: ParsedBody['joined'] = []
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>
    for (const [key, v] of Object.entries(record)) {
      if (!Array.isArray(v) || v.length < JOIN_AT || !v.every(s => typeof s === 'string' && !s.includes(SEPARATOR))) continue
      joined.push({ key, text: v.join(SEPARATOR) })
      record[key] = null
    }
  }
  return { value, joined }
}

/** The value `parseBody` parsed, its joined arrays split again. */
export function unjoin(parsed: ParsedBody): unknown {
  const record = parsed.value as Record<string, unknown>
  for (const { key, text } of parsed.joined) record[key] = text.split(SEPARATOR)
  return parsed.value
}
