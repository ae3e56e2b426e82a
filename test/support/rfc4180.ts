/**
 * A strict reader of RFC 4180 CSV (§2 and its ABNF), the oracle of the tests of the CSV
 * files we write: it never guesses. Records end with `recordDelimiter` (RFC 4180's CRLF;
 * a file written in a list's own LF line ending names `\n`), the last one optionally;
 * a field holding `delimiter`, a quote, CR or LF must be enclosed in double quotes (§2.6),
 * a quote inside one is doubled (§2.7); an unquoted field holds none of these, and a
 * quoted field ends at its closing quote, followed only by a delimiter, a record's end or
 * the end of the file. Unlike the ABNF, a field may hold any other Unicode character (the
 * lists are UTF-8) and the delimiter may be other than a comma (`;`, tab, `|`). A leading
 * UTF-8 byte-order mark is not read as data.
 * @returns the records, each an array of its fields' text.
 * @throws Error naming the offset of the first departure from the grammar.
 */
export function parseRfc4180(text: string, options: { delimiter?: string; recordDelimiter?: '\r\n' | '\n' } = {}): string[][] {
  const delimiter = options.delimiter ?? ','
  const eol = options.recordDelimiter ?? '\r\n'
  const s = text.startsWith('\uFEFF') ? text.slice(1) : text
  const records: string[][] = []
  if (s === '') return records
  let record: string[] = []
  let i = 0
  const fail = (what: string): never => {
    throw new Error(`not RFC 4180 at offset ${i}: ${what} (${JSON.stringify(s.slice(Math.max(0, i - 20), i + 20))})`)
  }
  for (;;) {
    let field = ''
    if (s[i] === '"') {
      i++
      for (;;) {
        if (i >= s.length) fail('a quoted field is never closed')
        if (s[i] === '"') {
          if (s[i + 1] === '"') {
            field += '"'
            i += 2
            continue
          }
          i++
          break
        }
        field += s[i++]
      }
    } else {
      while (i < s.length && s[i] !== delimiter && !s.startsWith(eol, i)) {
        if (s[i] === '"') fail('a quote in an unquoted field')
        if (s[i] === '\r' || s[i] === '\n') fail('a line break in an unquoted field')
        field += s[i++]
      }
    }
    record.push(field)
    if (i >= s.length) {
      records.push(record)
      return records
    }
    if (s[i] === delimiter) {
      i++
      continue
    }
    if (s.startsWith(eol, i)) {
      i += eol.length
      records.push(record)
      record = []
      if (i >= s.length) return records
      continue
    }
    fail('a field goes on after its closing quote')
  }
}
