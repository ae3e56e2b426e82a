import { type Command, InvalidArgumentError } from 'commander'
import { join } from 'node:path'
import { loadConfig, usage } from './common.ts'

/** `svc mail show`: the mail filed on the embedded default (DATA_DIR/outbox), with its code or link. */
export function registerMail(program: Command): void {
  const mail = program.command('mail').description('the mail filed on the embedded default (no SMTP_URL): DATA_DIR/outbox')
  mail
    .command('show')
    .description('the newest mail filed for an address, with the code or link it carries (confirmation code, reset or email-change link)')
    .requiredOption('--to <address>', 'the recipient')
    .option(
      '--wait <seconds>',
      'wait this long for one to arrive (the mail is filed just after the request that asks for it answers)',
      v => {
        const n = Number(v)
        if (!Number.isFinite(n) || n < 0 || n > 600) throw new InvalidArgumentError('seconds from 0 to 600')
        return n
      },
      0
    )
    .action(async (opts: { to: string; wait: number }) => {
      const config = await loadConfig()
      const { filedMailsTo } = await import('../infra/mail/outbox-reader.ts')
      if (config.smtp_url !== null) usage('SMTP_URL is set: mail is sent, not filed (read it in the mailbox)')
      const dir = join(config.data_dir, 'outbox')
      const deadline = Date.now() + opts.wait * 1000
      for (;;) {
        const [newest] = await filedMailsTo(dir, opts.to)
        if (newest) {
          const code = /\b(\d{6})\b/.exec(newest.text)?.[1] ?? null
          const link = /https?:\/\/\S+\?token=\S+/.exec(newest.text)?.[0] ?? null
          console.log(JSON.stringify({ ...newest, code, link }))
          return
        }
        if (Date.now() >= deadline) break
        await new Promise(resolve => setTimeout(resolve, 100))
      }
      console.error(`error: no mail to ${opts.to} in ${dir}${opts.wait > 0 ? ` after ${opts.wait} s` : ''} (mail.not_found)`)
      process.exitCode = 1
    })
}
