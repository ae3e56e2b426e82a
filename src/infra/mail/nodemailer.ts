import { writeFileSync, renameSync } from 'node:fs'
import { readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import nodemailer, { type Transporter } from 'nodemailer'
import type { Mailer, OutgoingMail } from '../../ports/mail.ts'
import { makePrivateDir } from '../private-files.ts'

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
    // Mails hold codes and links: the outbox is the service's user's alone (files 0600).
    makePrivateDir(dir)
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
