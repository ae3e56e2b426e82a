import { existsSync } from 'node:fs'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { simpleParser } from 'mailparser'

/** A mail as the outbox keeps it, read back (`svc mail show`). */
export interface FiledMail {
  file: string
  to: string
  subject: string
  date: string
  text: string
}

/**
 * The outbox's mails to `to` (case-insensitive), newest first, parsed with `mailparser`
 * (headers, quoted-printable body). Reads every file of the outbox: an operator's and a
 * developer's tool for the embedded default, where mail is filed rather than sent.
 */
export async function filedMailsTo(dir: string, to: string): Promise<FiledMail[]> {
  const names = existsSync(dir) ? (await readdir(dir)).filter(n => n.endsWith('.eml')) : []
  const want = to.trim().toLowerCase()
  const mails: Array<FiledMail & { at: number }> = []
  for (const name of names) {
    const path = join(dir, name)
    let parsed: Awaited<ReturnType<typeof simpleParser>>
    try {
      parsed = await simpleParser(await readFile(path))
    } catch {
      continue
    }
    const addresses = (Array.isArray(parsed.to) ? parsed.to : parsed.to ? [parsed.to] : []).flatMap(a => a.value.map(v => (v.address ?? '').toLowerCase()))
    if (!addresses.includes(want)) continue
    mails.push({
      file: path,
      to: want,
      subject: parsed.subject ?? '',
      date: (parsed.date ?? new Date(0)).toISOString(),
      text: parsed.text ?? '',
      at: (await stat(path)).mtimeMs
    })
  }
  return mails.sort((a, b) => b.at - a.at || b.file.localeCompare(a.file)).map(({ at: _at, ...m }) => m)
}
