// The engine against real mail servers from Debian's packages, end to end: Postfix (virtual
// mailboxes, a catch-all, a policy refusal, postgrey, a recipient rate limit, a connection
// limit of 1, strict SMTPUTF8, eight hosted domains on one address), OpenSMTPD (a virtual
// user table, a catch-all, no SMTPUTF8) and NSD (every name, a null MX, NXDOMAIN, an implicit
// MX, an IDN), Exim (Debian's default ACL, a catch-all, STARTTLS, two sessions at a time), each in a network namespace of the test's own, on port 25 there. One batch
// through the service's API with its default greylisting schedule. The oracles are the
// truth each server was configured with and the servers' own logs: no connection over a
// server's limit, no session cut for too many errors, the recipient rate limit exceeded in
// at most one session per window, SMTPUTF8 declared where a UTF-8 mailbox was asked, and
// the batch done within 1.25× of the greylisting window.
import t, { type Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { mailLabMissing, labHost, labRoot, startExim, startNsd, startPostfix, startPostgrey, startOpenSmtpd } from '../support/mail-lab.ts'
import { client, signUp, startTestService, testConfig } from '../support/service.ts'
import { waitUntil } from '../support/eventstore-contract.ts'
import { unlimitedRates } from '../support/plans.ts'
import { grantTokens } from '../../src/commands/wallet/grant-tokens.ts'

/** postgrey's delay (s): not one of our retry times (60 s, 75 s, …), so that the schedule is what is measured. */
const GREYLIST_S = 70
/** Postfix's anvil window is its default (`anvil_rate_time_unit` = 60 s); the limit per window on the rate-limited listener. */
const RATE_LIMIT = 20
const ANVIL_WINDOW_S = 60

type Truth = 'valid' | 'invalid' | 'risky' | 'unknown'

/**
 * Postfix's log cut into SMTP sessions: an smtpd process serves one connection after another
 * (`max_use`), so a session is what its process logged from a `connect from` to the next
 * `disconnect from`. `start`: when it began (epoch ms, this year: the log has no year).
 */
function postfixSessions(log: string): Array<{ start: number; lines: string[] }> {
  const out: Array<{ start: number; lines: string[] }> = []
  const open = new Map<string, { start: number; lines: string[] }>()
  for (const line of log.split('\n')) {
    const m = /^(\w{3} +\d+ [\d:]+) \S+ postfix\/smtpd\[(\d+)\]: (.*)$/.exec(line)
    if (!m) continue
    if (m[3].startsWith('connect from ')) {
      const s = { start: Date.parse(`${m[1]} ${new Date().getFullYear()}`), lines: [] as string[] }
      open.set(m[2], s)
      out.push(s)
    }
    open.get(m[2])?.lines.push(m[3])
    if (m[3].startsWith('disconnect from ')) open.delete(m[2])
  }
  return out
}

async function suite(t: Test): Promise<void> {
  const root = labRoot(t)
  const dns = labHost(t, 0, 1, root)
  const pf = labHost(t, 1, 6, root)
  const osd = labHost(t, 2, 1, root)
  // Nothing listens here: a primary MX that refuses every connection.
  const dead = labHost(t, 3, 1, root)
  const exim = labHost(t, 4, 1, root)
  const [plain, grey, rate, single, hosting, utf8] = pf.ips

  const truth = new Map<string, Truth>()
  const expect = (v: Truth, ...addresses: string[]): void => {
    for (const a of addresses) truth.set(a, v)
  }
  const range = (prefix: string, n: number, domain: string): string[] =>
    Array.from({ length: n }, (_, i) => `${prefix}${String(i + 1).padStart(2, '0')}@${domain}`)

  // Postfix, plain: 30 mailboxes that exist and 30 that do not (past Postfix's soft and hard error limits in one session).
  const virtualOk = range('user', 30, 'lab-virtual.net')
  const virtualGone = range('gone', 30, 'lab-virtual.net')
  expect('valid', ...virtualOk)
  expect('invalid', ...virtualGone)
  // A policy refusal (554 5.7.1): the mailbox's existence is not what was answered.
  expect('unknown', 'blocked@lab-virtual.net')
  // A catch-all domain.
  expect('risky', 'anyone@lab-catchall.net', 'someone-else@lab-catchall.net')
  // An IDN domain (its A-labels in DNS) and UTF-8 mailboxes under strict SMTPUTF8.
  expect('valid', 'leser@bücherpost.net', 'jürgen@lab-utf8.net')
  expect('invalid', 'niemand@bücherpost.net', 'müller@lab-utf8.net')
  // An implicit MX (an A record, no MX) and a backup MX behind a dead primary.
  expect('valid', 'user01@lab-implicit.net', 'user01@lab-backup.net')
  expect('invalid', 'gone01@lab-implicit.net', 'gone01@lab-backup.net')
  // Greylisted by postgrey, then answered.
  expect('valid', ...range('user', 6, 'lab-greylist.net'))
  expect('invalid', ...range('gone', 4, 'lab-greylist.net'))
  // A recipient rate limit of RATE_LIMIT per anvil window.
  const rateOk = range('user', RATE_LIMIT + 8, 'lab-ratelimit.net')
  expect('valid', ...rateOk)
  expect('invalid', ...range('gone', 4, 'lab-ratelimit.net'))
  // One session at a time, with errors enough to need more than one.
  expect('valid', ...range('user', 8, 'lab-onesession.net'))
  expect('invalid', ...range('gone', 14, 'lab-onesession.net'))
  // Eight hosted domains, MX names of their own, one address.
  const hosted = Array.from({ length: 8 }, (_, i) => `lab-hosted${i + 1}.net`)
  for (const d of hosted) {
    expect('valid', ...range('user', 6, d))
    expect('invalid', ...range('gone', 3, d))
  }
  // OpenSMTPD: a virtual user table (524 5.2.4 for a user not in it), a catch-all, no SMTPUTF8.
  expect('valid', ...range('user', 10, 'lab-opensmtpd.net'))
  expect('invalid', ...range('gone', 6, 'lab-opensmtpd.net'))
  expect('risky', 'whoever@lab-osd-catchall.net')
  expect('unknown', 'jürgen@lab-opensmtpd.net')
  // Exim: Debian's default ACL (550 Unrouteable address), a catch-all, SMTPUTF8 and STARTTLS offered, two sessions at a time from us.
  expect('valid', ...range('user', 8, 'lab-exim.net'), 'jürgen@lab-exim.net')
  expect('invalid', ...range('gone', 5, 'lab-exim.net'))
  expect('risky', 'anybody@lab-exim-catchall.net')
  // DNS alone: a null MX (RFC 7505), a domain that does not exist, a dead MX.
  expect('invalid', 'user01@lab-nullmx.net', 'user01@lab-nothere.net')
  expect('unknown', 'user01@lab-deadmx.net')

  const mailboxDomains = [
    'lab-virtual.net',
    'xn--bcherpost-q9a.net',
    'lab-utf8.net',
    'lab-implicit.net',
    'lab-backup.net',
    'lab-greylist.net',
    'lab-ratelimit.net',
    'lab-onesession.net',
    ...hosted
  ]
  const mailboxes = [...truth]
    .filter(([a, v]) => v === 'valid' && !a.endsWith('@lab-exim.net'))
    .map(([a]) => a.replace('@bücherpost.net', '@xn--bcherpost-q9a.net'))
  const mx = (name: string, exchange: string, ip: string): string[] => [`${name} IN MX 10 ${exchange}`, `${exchange} IN A ${ip}`]
  const server = await startNsd(t, dns, [
    {
      origin: 'net',
      records: [
        ...mx('lab-virtual', 'mx.lab-virtual', plain),
        ...mx('lab-catchall', 'mx.lab-catchall', plain),
        ...mx('xn--bcherpost-q9a', 'mail.xn--bcherpost-q9a', plain),
        ...mx('lab-utf8', 'mx.lab-utf8', utf8),
        `lab-implicit IN A ${plain}`,
        'lab-backup IN MX 10 mx1.lab-backup',
        `mx1.lab-backup IN A ${dead.ips[0]}`,
        'lab-backup IN MX 20 mx2.lab-backup',
        `mx2.lab-backup IN A ${plain}`,
        ...mx('lab-greylist', 'mx.lab-greylist', grey),
        ...mx('lab-ratelimit', 'mx.lab-ratelimit', rate),
        ...mx('lab-onesession', 'mx.lab-onesession', single),
        ...hosted.flatMap(d => mx(d.replace('.net', ''), `mail.${d.replace('.net', '')}`, hosting)),
        ...mx('lab-opensmtpd', 'mx.lab-opensmtpd', osd.ips[0]),
        ...mx('lab-osd-catchall', 'mx.lab-osd-catchall', osd.ips[0]),
        ...mx('lab-exim', 'mx.lab-exim', exim.ips[0]),
        ...mx('lab-exim-catchall', 'mx.lab-exim-catchall', exim.ips[0]),
        'lab-nullmx IN MX 0 .',
        ...mx('lab-deadmx', 'mx.lab-deadmx', dead.ips[0])
      ]
    }
  ])
  await startPostgrey(t, pf, GREYLIST_S)
  const postfix = await startPostfix(t, pf, {
    hostname: 'mx.lab-virtual.net',
    virtual_domains: [...mailboxDomains, 'lab-catchall.net'],
    mailboxes,
    aliases: [['@lab-catchall.net', 'user01@lab-virtual.net']],
    access: [['blocked@lab-virtual.net', 'REJECT 5.7.1 <blocked@lab-virtual.net>: recipient refused by local policy']],
    main: { anvil_rate_time_unit: `${ANVIL_WINDOW_S}s`, strict_smtputf8: 'yes' },
    listeners: [
      { ip: plain },
      { ip: grey, options: { smtpd_recipient_restrictions: 'check_policy_service,inet:127.0.0.1:10023,reject_unauth_destination' } },
      { ip: rate, options: { smtpd_client_recipient_rate_limit: String(RATE_LIMIT) } },
      { ip: single, options: { smtpd_client_connection_count_limit: '1' } },
      { ip: hosting, options: { smtpd_client_connection_count_limit: '10' } },
      { ip: utf8 }
    ]
  })
  const opensmtpd = await startOpenSmtpd(t, osd, {
    hostname: 'mx.lab-opensmtpd.net',
    ip: osd.ips[0],
    domains: ['lab-opensmtpd.net', 'lab-osd-catchall.net'],
    users: [...range('user', 10, 'lab-opensmtpd.net'), '@lab-osd-catchall.net']
  })

  const eximServer = await startExim(t, exim, {
    hostname: 'mx.lab-exim.net',
    ip: exim.ips[0],
    domain: 'lab-exim.net',
    users: [...range('user', 8, 'lab-exim.net'), 'jürgen@lab-exim.net'].map(a => a.split('@')[0]),
    catch_all_domains: ['lab-exim-catchall.net'],
    // Two MX names lead to it (each gets one session at a time): a strict limit that still lets both work at once.
    max_per_host: 2
  })

  const dataDir = t.testdir()
  const service = await startTestService(
    testConfig(dataDir, {
      VERIFIER_DNS_SERVERS: server,
      VERIFIER_SMTP_PORT: '25',
      VERIFIER_SMTP_TIMEOUT_MS: '10000',
      // The service's own greylisting schedule (first retry, doubling) and deadline: its defaults.
      VERIFIER_GREYLIST_RETRY_S: '60',
      VERIFIER_GREYLIST_DEADLINE_S: '1800',
      ...unlimitedRates(dataDir)
    })
  )
  t.teardown(() => service.close())
  const api = client(service.url)
  const token = await signUp(api, dataDir, 'lab@example.com')
  await grantTokens(service.core.ctx, { email: 'lab@example.com', tokens: 100_000, reason: 'real servers', operator: 'test' })
  const key = (await api('POST', '/api/keys', { token, body: { name: 'lab', environment: 'live' } })).body.raw_key as string

  const emails = [...truth.keys()]
  const started = Date.now()
  const submitted = await api('POST', '/api/batches', { token: key, body: { emails, checks: ['syntax', 'dns', 'smtp', 'catch_all'], final: true } })
  t.equal(submitted.status, 202, JSON.stringify(submitted.body))
  const uuid = submitted.body.uuid as string
  let batch: any
  /** The batch's progress as the API showed it, polled while it ran: when, and how many items had their result. */
  const progress: Array<{ s: number; processed: number }> = []
  await waitUntil(
    async () => {
      batch = (await api('GET', `/api/batches/${uuid}`, { token: key })).body
      progress.push({ s: (Date.now() - started) / 1000, processed: batch.progress.processed })
      return batch.status === 'completed'
    },
    4 * GREYLIST_S * 1000
  )
  const wall = (Date.now() - started) / 1000

  const items: any[] = []
  for (let offset = 0; ; ) {
    const page = await api('GET', `/api/batches/${uuid}/results?limit=100&offset=${offset}`, { token: key })
    if (page.status !== 200 || page.body.items.length === 0) break
    items.push(...page.body.items)
    offset += page.body.items.length
  }
  // The last sessions may still be closing (their QUIT after the last answer): the logs are
  // read once every session each server logged as opened it logged as ended.
  const count = (text: string, re: RegExp): number => text.match(re)?.length ?? 0
  await waitUntil(
    () =>
      postfixSessions(postfix.log()).every(s => s.lines.some(l => l.startsWith('disconnect from '))) &&
      count(eximServer.log(), /SMTP connection from \[/g) === count(eximServer.log(), /SMTP connection from .* (closed by|lost)/g) &&
      count(opensmtpd.log(), /smtp connected /g) === count(opensmtpd.log(), /smtp disconnected /g),
    10_000
  )
  // MAIL_LAB_LOGS=<dir>: the servers' logs and the results kept there, to read after a run.
  const keep = process.env.MAIL_LAB_LOGS
  if (keep) {
    writeFileSync(join(keep, 'postfix.log'), postfix.log())
    writeFileSync(join(keep, 'opensmtpd.log'), opensmtpd.log())
    writeFileSync(join(keep, 'exim.log'), eximServer.log())
    writeFileSync(join(keep, 'results.json'), JSON.stringify({ wall, batch, items }, null, 1))
  }
  t.equal(items.length, emails.length, 'every address has a result')

  t.test('every firm answer right; unknown only where the truth is unknowable', async t => {
    const wrong: string[] = []
    for (const x of items) {
      const want = truth.get(x.email)
      if (x.verdict !== want) wrong.push(`${x.email}: ${x.verdict}/${x.reason}, truth ${want}`)
    }
    t.same(wrong, [], `${wrong.length} of ${items.length} not as the servers were configured`)
    // The address as submitted, its ASCII form beside it (RFC 5891 A-labels: what DNS and the server were asked).
    t.match(
      items.find(x => x.email === 'leser@bücherpost.net'),
      { email: 'leser@bücherpost.net', normalized: 'leser@xn--bcherpost-q9a.net' }
    )
  })

  t.test('progress follows the answers: what is known is shown while greylisting and the rate limit hold the rest', async t => {
    // Held back at 20 s: the greylisted domain's items (until its window) and what the rate
    // limit left for the next anvil window; every other answer came within seconds.
    const held = [...truth.keys()].filter(a => /@lab-(greylist|ratelimit)\.net$/.test(a)).length
    const sample = progress.find(p => p.s >= 20)
    t.ok(sample !== undefined && sample.s < GREYLIST_S, `a sample between 20 s and the greylisting window: ${JSON.stringify(sample)}`)
    t.ok(sample!.processed >= emails.length - held, `${sample!.processed} of ${emails.length} shown at ${sample!.s.toFixed(1)} s (${held} may wait)`)
  })

  t.test(`done within 1.25× of the greylisting window (${GREYLIST_S} s)`, async t => {
    t.ok(wall <= 1.25 * GREYLIST_S, `the batch took ${wall.toFixed(1)} s`)
  })

  t.test("Postfix's log: no connection over a limit, no session cut, the rate limit hit in one session per window at most", async t => {
    const log = postfix.log()
    const sessions = postfixSessions(log)
    // Positive controls: Postfix logged our sessions, greylisted us and refused past the rate limit.
    t.ok(sessions.length > 10, `Postfix logged ${sessions.length} sessions of ours`)
    t.match(log, /Greylisted/, 'postgrey greylisted the first round')
    // The one-session listener's domain needed more than one session (more refusals than a session's error budget).
    const oneSession = sessions.filter(s => s.lines.some(l => /reject: RCPT from .*@lab-onesession\.net>/.test(l)))
    t.ok(oneSession.length >= 2, `${oneSession.length} sessions to the listener that allows one at a time`)
    t.notMatch(log, /Connection concurrency limit exceeded/, 'no connection over smtpd_client_connection_count_limit')
    t.notMatch(log, /too many errors after/, 'no session cut for too many errors (smtpd_hard_error_limit)')
    const idle = sessions.filter(s => !s.lines.some(l => /^disconnect from .* mail=/.test(l)))
    t.same(idle.length, 0, 'every session asked something (its disconnect line counts a MAIL FROM)')
    t.notMatch(log, /Connection rate limit exceeded/, 'no connection rate limit exceeded')
    const errors = Math.max(...sessions.map(s => s.lines.filter(l => /: reject: /.test(l)).length))
    t.ok(errors <= 10, `at most ${errors} refusals in a session: no reply slowed by smtpd_soft_error_limit (10)`)
    // Sessions that hit the recipient rate limit, by when they began: one per anvil window at most.
    const limited = sessions.filter(s => s.lines.some(l => /warning: Recipient address rate limit exceeded/.test(l))).map(s => s.start)
    t.ok(limited.length >= 1, 'the rate limit was reached (the listener limits us)')
    for (let k = 1; k < limited.length; k++)
      t.ok(limited[k] - limited[k - 1] >= ANVIL_WINDOW_S * 1000, `sessions that hit the rate limit ${(limited[k] - limited[k - 1]) / 1000} s apart`)
    t.notMatch(log, /5\.6\.7/, 'no UTF-8 address sent without SMTPUTF8 (strict_smtputf8 would refuse it)')
  })

  t.test("Exim's log: no connection over its limit, every session ended by QUIT", async t => {
    const log = eximServer.log()
    t.match(log, /SMTP connection from .* closed by QUIT/, 'Exim logged our sessions')
    t.match(log, /rejected RCPT <gone01@lab-exim\.net>: Unrouteable address/, 'a local part not in the list: Unrouteable address')
    t.notMatch(log, /too many connections from that IP address/, 'no connection over smtp_accept_max_per_host (2)')
    t.notMatch(log, /no MAIL in SMTP connection/, 'every session asked something (log_selector +smtp_no_mail)')
    t.notMatch(log, /SMTP connection from .* (lost|closed by (?!QUIT))/, 'every session ended by QUIT')
    t.notMatch(log, /rejected (MAIL|RCPT) <jürgen/, 'the UTF-8 mailbox was asked as Exim takes it (SMTPUTF8 declared)')
  })

  t.test("OpenSMTPD's log: the UTF-8 mailbox not asked without SMTPUTF8, no session cut", async t => {
    const log = opensmtpd.log()
    t.match(log, /smtp connected address=/, 'OpenSMTPD logged our sessions')
    t.match(log, /524 5\.2\.4/, 'a user not in the table: 524 5.2.4')
    t.notMatch(log, /jürgen/, 'the UTF-8 mailbox was not sent to a server that does not offer SMTPUTF8')
    t.notMatch(log, /reason=(?!quit)/, 'every session ended with QUIT')
  })
}

const missing = mailLabMissing()
if (missing && process.env.REQUIRE_MAIL_SERVERS === '1') throw new Error(`REQUIRE_MAIL_SERVERS=1 but the real mail servers cannot run: ${missing}`)
if (missing) {
  t.plan(0, `real mail servers: ${missing}`)
} else {
  t.test('one batch against real Postfix, postgrey, OpenSMTPD and NSD', suite)
}
