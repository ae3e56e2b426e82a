import t from 'tap'
import { classifyRcpt, classifySessionRefusal } from '../../src/verifier/classify.ts'

const r = (code: number, enhanced: string | null, message: string) => ({ code, enhanced, message })

// Replies as real receivers word them (RFC 3463 enhanced codes where they send them).
const cases: Array<[ReturnType<typeof r>, string]> = [
  [r(250, '2.1.5', 'OK'), 'accepted'],
  [r(251, null, 'User not local; will forward'), 'accepted'],
  [r(550, '5.1.1', 'The email account that you tried to reach does not exist.'), 'mailbox_not_found'],
  [r(550, null, 'No such user here'), 'mailbox_not_found'],
  [r(550, '5.4.1', 'Recipient address rejected: Access denied'), 'mailbox_not_found'],
  [r(553, '5.1.10', 'Recipient address rejected: Null MX'), 'mailbox_not_found'],
  [r(550, '5.2.1', 'The email account that you tried to reach is disabled.'), 'mailbox_disabled'],
  [r(552, '5.2.2', 'The email account that you tried to reach is over quota.'), 'mailbox_full'],
  [r(452, '4.2.2', 'Mailbox full'), 'mailbox_full'],
  [r(554, '5.7.1', 'Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org'), 'ip_blocked'],
  [r(550, '5.7.1', 'Our system has detected an unusual rate of mail originating from your IP address'), 'ip_blocked'],
  // X.7.x is security or policy (RFC 3463 §3.8): never `invalid`. A relay refusal says the
  // server will not take mail for the address from us, not that the mailbox is missing.
  [r(550, '5.7.1', 'Relaying denied'), 'policy_rejected'],
  [r(554, '5.7.1', '<jane@example.com>: Recipient address rejected: Access denied'), 'policy_rejected'],
  [r(550, '5.7.1', 'No such user!'), 'policy_rejected'],
  [r(554, null, '<jane@example.com>: Recipient address rejected: Access denied'), 'policy_rejected'],
  [r(553, '5.1.8', '<probe@verifier.example>... Domain of sender address probe@verifier.example does not exist'), 'policy_rejected'],
  [r(550, '5.4.1', 'Relay Access Denied'), 'smtp_unavailable'],
  [r(550, '5.5.0', 'Requested action not taken: mailbox unavailable.'), 'mailbox_not_found'],
  [r(553, null, "sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)"), 'policy_rejected'],
  [r(511, null, 'sorry, no mailbox here by that name (#5.1.1 - chkuser)'), 'mailbox_not_found'],
  [r(552, '5.5.3', 'Too many recipients'), 'too_many_recipients'],
  [r(554, null, 'Message rejected'), 'rejected_email'],
  [r(450, '4.2.0', 'Greylisted, see http://postgrey.schweikert.ch/'), 'greylisted'],
  [r(451, '4.7.1', 'Please try again later'), 'greylisted'],
  [r(452, '4.5.3', 'Too many recipients'), 'too_many_recipients'],
  [r(421, '4.7.0', 'Try again later, closing connection'), 'smtp_unavailable'],
  [r(450, '4.7.1', 'Client host rejected: cannot find your hostname, blocked'), 'ip_blocked']
]

for (const [reply, outcome] of cases) {
  t.test(`${reply.code} ${reply.enhanced ?? ''} ${reply.message} → ${outcome}`, async t => {
    t.equal(classifyRcpt(reply), outcome)
  })
}

t.test('session refusals are never about the mailbox', async t => {
  t.equal(classifySessionRefusal(r(554, '5.7.1', 'Client host rejected: listed at spamhaus')), 'ip_blocked')
  t.equal(classifySessionRefusal(r(421, '4.3.2', 'Too busy')), 'smtp_unavailable')
  t.equal(classifySessionRefusal(r(554, null, 'No SMTP service here')), 'smtp_unavailable')
})
