/** A transactional mail. `id` makes sending idempotent (Message-ID, outbox file name). */
export interface OutgoingMail {
  id: string
  to: string
  subject: string
  text: string
}

export interface Mailer {
  /** Sends (or files) one mail. @throws when the transport refuses it (the caller retries). */
  send (mail: OutgoingMail): Promise<void>
  close (): Promise<void>
}
