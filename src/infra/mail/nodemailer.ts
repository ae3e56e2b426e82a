import { existsSync, mkdirSync, writeFileSync, renameSync } from 'node:fs'
import { readdir, readFile, rm, stat } from 'node:fs/promises'
import { simpleParser } from 'mailparser'
import { join } from 'node:path'
import nodemailer, { type Transporter } from 'nodemailer'
import type { Mailer, OutgoingMail } from '../../ports/mail.ts'

function messageId(mail: OutgoingMail, from: string): string {
  const domain = /@([^>\s]+)/.exec(from)?.[1] ?? 'localhost'
  return `<${mail.id}@${domain}>`
}

/** Mail over SMTP (`SMTP_URL`) with nodemailer. */
export class SmtpMailer implements Mailer {
  private readonly transport: Transporter
  private readonly from: string
  constructor(url: string, from: string) {
    this.transport = nodemailer.createTransport(url)
    this.from = from
  }

  async send(mail: OutgoingMail): Promise<void> {
    await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text, messageId: messageId(mail, this.from) })
  }

  /** Nothing is kept here: the mail left with the SMTP server. */
  async erase(_owner: string): Promise<number> {
    return 0
  }

  async close(): Promise<void> {
    this.transport.close()
  }
}

/**
 * Embedded default: each mail is written as an RFC 5322 `.eml` file to `dir`
 * (`DATA_DIR/outbox`), named `<account uuid>.<mail id>.eml` so a repeated send replaces the
 * same file and an account's erasure finds its files, and one log line names the file
 * (never its content).
 */
export class OutboxMailer implements Mailer {
  private readonly dir: string
  private readonly from: string
  private readonly log: (line: string) => void
  private readonly transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' })

  constructor(dir: string, from: string, log: (line: string) => void) {
    this.dir = dir
    this.from = from
    this.log = log
    mkdirSync(dir, { recursive: true })
  }

  async send(mail: OutgoingMail): Promise<void> {
    const info = await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text, messageId: messageId(mail, this.from) })
    const file = join(this.dir, `${mail.owner}.${mail.id}.eml`)
    writeFileSync(`${file}.tmp`, info.message as Buffer, { mode: 0o600 })
    renameSync(`${file}.tmp`, file)
    this.log(`mail "${mail.subject}" filed in outbox: ${file}`)
  }

  /** Deletes the account's `.eml` files (their names start with its uuid). Cost: one listing of the outbox. */
  async erase(owner: string): Promise<number> {
    const mine = (await readdir(this.dir)).filter(n => n.startsWith(`${owner}.`) && (n.endsWith('.eml') || n.endsWith('.eml.tmp')))
    await Promise.all(
      mine.map(async n => {
        await rm(join(this.dir, n), { force: true })
      })
    )
    return mine.length
  }

  async close(): Promise<void> {}
}

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
