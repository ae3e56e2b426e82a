import type { RecordedEvent } from '../ports/event-store.ts'
import type { Bus, Consumer } from '../ports/bus.ts'
import type { Mailer } from '../ports/mail.ts'
import type { ConfirmationCodeIssued, EmailChanged, EmailChangeRequested, PasswordChanged, PasswordResetRequested } from '../domain/user/events.ts'
import type { CommandContext } from '../commands/context.ts'
import { confirmationMail, emailChangedMail, emailChangeMail, passwordChangedMail, resetMail, twoFactorMail } from './mail-templates.ts'
import { users } from '../commands/user/aggregate.ts'

/** Event types the mailer consumes (its NATS stream and durable consumer). */
export const MAILER_EVENTS = [
  'ConfirmationCodeIssued',
  'PasswordResetRequested',
  'EmailChangeRequested',
  'PasswordChanged',
  'EmailChanged',
  'TwoFactorEnabled',
  'TwoFactorDisabled',
  'UserDeleted'
] as const

/**
 * The mailer worker: sends the mail that an event calls for, in the account's locale.
 * ConfirmationCodeIssued → the code; PasswordResetRequested → the reset link (`token=`);
 * both unsealed with the account's data key; PasswordChanged → a notice to the account's
 * address; EmailChanged → a notice to the previous address; TwoFactorEnabled/Disabled →
 * a notice to the account; UserDeleted → the account's kept mails (outbox files) are
 * removed. The mail id is
 * the event id, so a redelivered event re-sends the same message (same Message-ID, same
 * outbox file). Nothing is sent for an erased account or a code that was superseded.
 */
export async function startMailerWorker(ctx: CommandContext, bus: Bus, mailer: Mailer): Promise<Consumer> {
  return await bus.consume({ name: 'mailer', event_types: MAILER_EVENTS, concurrency: 4, max_deliveries: 8 }, async (event: RecordedEvent) => {
    if (event.type === 'UserDeleted') {
      // Erasure: the mails this mailer kept of the account (the outbox's files) go with it.
      await mailer.erase(event.data.user_uuid as string)
      return
    }
    if (event.type === 'EmailChangeRequested') {
      const d = event.data as EmailChangeRequested['data']
      const { state } = await users.load(ctx, d.user_uuid)
      if (state.status === 'none' || state.email_change?.hash !== d.token_hash) return
      const [to, token] = await Promise.all([ctx.sealer.unseal(d.user_uuid, d.new_email), ctx.sealer.unseal(d.user_uuid, d.token)])
      if (to === null || token === null) return
      const mail = emailChangeMail(state.locale, `${ctx.base_url()}/verify-email-change?token=${encodeURIComponent(token)}`)
      await mailer.send({ id: event.id, owner: d.user_uuid, to, subject: mail.subject, text: mail.text })
      return
    }
    if (event.type === 'TwoFactorEnabled' || event.type === 'TwoFactorDisabled') {
      const owner = event.data.user_uuid as string
      const { state } = await users.load(ctx, owner)
      if (state.status !== 'confirmed') return
      const to = await ctx.sealer.unseal(owner, state.email)
      if (to === null) return
      const mail = twoFactorMail(state.locale, event.type === 'TwoFactorEnabled')
      await mailer.send({ id: event.id, owner, to, subject: mail.subject, text: mail.text })
      return
    }
    if (event.type === 'PasswordChanged') {
      const d = event.data as PasswordChanged['data']
      const { state } = await users.load(ctx, d.user_uuid)
      if (state.status !== 'confirmed') return
      const to = await ctx.sealer.unseal(d.user_uuid, state.email)
      if (to === null) return
      const mail = passwordChangedMail(state.locale, d.reason)
      await mailer.send({ id: event.id, owner: d.user_uuid, to, subject: mail.subject, text: mail.text })
      return
    }
    if (event.type === 'EmailChanged') {
      const d = event.data as EmailChanged['data']
      if (d.previous_email === undefined) return
      const { state } = await users.load(ctx, d.user_uuid)
      if (state.status !== 'confirmed') return
      const [to, now] = await Promise.all([ctx.sealer.unseal(d.user_uuid, d.previous_email), ctx.sealer.unseal(d.user_uuid, d.email)])
      if (to === null || now === null) return
      const mail = emailChangedMail(state.locale, now)
      await mailer.send({ id: event.id, owner: d.user_uuid, to, subject: mail.subject, text: mail.text })
      return
    }
    if (event.type === 'PasswordResetRequested') {
      const d = event.data as PasswordResetRequested['data']
      const { state } = await users.load(ctx, d.user_uuid)
      if (state.status !== 'confirmed' || state.reset?.hash !== d.token_hash) return
      const [to, token] = await Promise.all([ctx.sealer.unseal(d.user_uuid, state.email), ctx.sealer.unseal(d.user_uuid, d.token)])
      if (to === null || token === null) return
      const link = `${ctx.base_url()}/reset-password?token=${encodeURIComponent(token)}`
      const mail = resetMail(state.locale, link, Math.round((Date.parse(d.expires_at) - Date.parse(d.requested_at)) / 60_000))
      await mailer.send({ id: event.id, owner: d.user_uuid, to, subject: mail.subject, text: mail.text })
      return
    }
    const data = event.data as ConfirmationCodeIssued['data']
    const { state } = await users.load(ctx, data.user_uuid)
    if (state.status !== 'unconfirmed' || state.code?.hash !== data.code_hash) return
    const [to, code] = await Promise.all([ctx.sealer.unseal(data.user_uuid, state.email), ctx.sealer.unseal(data.user_uuid, data.code)])
    if (to === null || code === null) return
    const minutes = Math.round((Date.parse(data.expires_at) - Date.parse(data.issued_at)) / 60_000)
    const mail = confirmationMail(state.locale, code, minutes)
    await mailer.send({ id: event.id, owner: data.user_uuid, to, subject: mail.subject, text: mail.text })
  })
}
