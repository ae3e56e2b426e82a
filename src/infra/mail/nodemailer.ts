import { mkdirSync, writeFileSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import nodemailer, { type Transporter } from 'nodemailer'
import type { Mailer, OutgoingMail } from './port.ts'

function messageId (mail: OutgoingMail, from: string): string {
  const domain = /@([^>\s]+)/.exec(from)?.[1] ?? 'localhost'
  return `<${mail.id}@${domain}>`
}

/** Mail over SMTP (`SMTP_URL`) with nodemailer. */
export class SmtpMailer implements Mailer {
  private readonly transport: Transporter
  private readonly from: string
  constructor (url: string, from: string) {
    this.transport = nodemailer.createTransport(url)
    this.from = from
  }

  async send (mail: OutgoingMail): Promise<void> {
    await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text, messageId: messageId(mail, this.from) })
  }

  async close (): Promise<void> { this.transport.close() }
}

/**
 * Embedded default: each mail is written as an RFC 5322 `.eml` file to `dir`
 * (`DATA_DIR/outbox`), named by mail id so a repeated send replaces the same file,
 * and one log line names the file (never its content).
 */
export class OutboxMailer implements Mailer {
  private readonly dir: string
  private readonly from: string
  private readonly log: (line: string) => void
  private readonly transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' })

  constructor (dir: string, from: string, log: (line: string) => void) {
    this.dir = dir
    this.from = from
    this.log = log
    mkdirSync(dir, { recursive: true })
  }

  async send (mail: OutgoingMail): Promise<void> {
    const info = await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text, messageId: messageId(mail, this.from) })
    const file = join(this.dir, `${mail.id}.eml`)
    writeFileSync(`${file}.tmp`, info.message as Buffer, { mode: 0o600 })
    renameSync(`${file}.tmp`, file)
    this.log(`mail "${mail.subject}" filed in outbox: ${file}`)
  }

  async close (): Promise<void> {}
}
