/** A transactional mail. `id` makes sending idempotent (Message-ID, outbox file name). */
export interface OutgoingMail {
  id: string
  /** The account it concerns (its uuid): what the mailer keeps of it goes with the account's erasure. */
  owner: string
  to: string
  subject: string
  text: string
}

export interface Mailer {
  /** Sends (or files) one mail. @throws when the transport refuses it (the caller retries). */
  send(mail: OutgoingMail): Promise<void>
  /** Removes every mail of `owner` this mailer keeps (the outbox's files; nothing for SMTP, which keeps none). Idempotent. */
  erase(owner: string): Promise<number>
  close(): Promise<void>
}
