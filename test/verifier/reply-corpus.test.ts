import t from 'tap'
import { parseReply } from '../../src/verifier/smtp-client.ts'
import { classifyRcpt, classifySessionRefusal, type RcptOutcome } from '../../src/verifier/classify.ts'
import { refusalReason } from '../../src/verifier/verdict.ts'
import { VERDICT_OF, type Verdict } from '../../src/verifier/result.ts'

// A corpus of real replies to RCPT TO (and a few session refusals), each as its source
// documents it, and the outcome the classifier must give. Placeholders of the sources are
// filled in: our probe's IP is 192.0.2.1 (RFC 5737), our sender probe@verifier.example, the
// recipient jane@<the provider's domain>; session IDs are shortened. Sources were written
// down from the vendors' documentation and public collections of bounces; the URLs name
// where they are published.
//
// The rule under test (src/verifier/classify.ts): the enhanced code first (RFC 3463 §3);
// X.7.x is security or policy and never makes an address `invalid`; the wording only where
// the code says nothing (no code, X.0.x, X.Y.0), with provider exceptions.

interface Entry {
  vendor: 'Postfix' | 'Exim' | 'OpenSMTPD' | 'Sendmail' | 'qmail' | 'Microsoft' | 'Google' | 'Yahoo' | 'Blocklists' | 'Gateways' | 'Other providers'
  source: string
  /** The reply as it came, one string per line (`550-…` … `550 …`). */
  wire: string | string[]
  rcpt: RcptOutcome
  /** The same reply before RCPT (banner, EHLO, MAIL FROM), where the source shows it there. */
  session?: 'ip_blocked' | 'smtp_unavailable'
  note?: string
}

const POSTCONF = 'Postfix postconf(5), https://www.postfix.org/postconf.5.html'
const EXIM = 'Exim specification, ch. "Access control lists" and "Address verification", https://www.exim.org/exim-html-current/doc/html/spec_html/'
const SENDMAIL = 'sendmail cf/README and Installation and Operation Guide, https://www.sendmail.org/'
const MS_NDR =
  'Microsoft Learn, "Email non-delivery reports and SMTP errors in Exchange Online", https://learn.microsoft.com/exchange/mail-flow-best-practices/non-delivery-reports-in-exchange-online/non-delivery-reports-in-exchange-online'
const MS_700 = 'Microsoft Learn, "Fix email delivery issues for error codes 5.7.700 through 5.7.750 in Exchange Online"'
const GOOGLE = 'Google Workspace Admin Help, "Gmail SMTP errors and codes", https://support.google.com/a/answer/3726730'
const YAHOO = 'Yahoo Sender Hub, "SMTP Error Codes", https://senders.yahooinc.com/smtp-error-codes/'
const YAHOO_HELP = 'Yahoo Help SLN3444, "Email sent to Yahoo Mail addresses is rejected", https://help.yahoo.com/kb/SLN3444.html'
const MIMECAST = 'Mimecast, "Mimecast SMTP Error Codes" (DOC-1369), https://community.mimecast.com/docs/DOC-1369'
const SMTP_CODES = 'smtp.codes, "SMTP Error Code 550" (bounces by provider), https://smtp.codes/550'
const SITEPACKAGE =
  'sitepackage.de, "Typische Fehlermeldungen bei Unzustellbarkeit" (bounces by provider), http://www.sitepackage.de/service/dokumentation/auswertung/typische-fehlermeldungen-bei-unzustellbarkeit.html'

const OPENSMTPD = 'OpenSMTPD smtpd/lka_session.c (lka_expand, lka_resume), https://github.com/OpenSMTPD/OpenSMTPD'

const corpus: Entry[] = [
  // OpenSMTPD
  {
    vendor: 'OpenSMTPD',
    source: `${OPENSMTPD}: a virtual-table domain with no entry for the user and no "@" catch-all (aliases_virtual_get finds nothing: LKA_PERMFAIL)`,
    wire: '524 5.2.4 Mailing list expansion problem',
    rcpt: 'rejected_email',
    note: 'The same reply for an alias loop or an empty expansion: mail to it is never delivered, though the mailbox may not be what is missing.'
  },
  {
    vendor: 'OpenSMTPD',
    source: `${OPENSMTPD}: the same lookup failing (a table backend error: LKA_TEMPFAIL)`,
    wire: '424 4.2.4 Mailing list expansion problem',
    rcpt: 'smtp_unavailable'
  },
  {
    vendor: 'OpenSMTPD',
    source: `${OPENSMTPD}: an expansion error without its own message`,
    wire: '550 Invalid recipient',
    rcpt: 'mailbox_not_found'
  },
  // Postfix
  {
    vendor: 'Postfix',
    source: `${POSTCONF} (smtpd_client_recipient_rate_limit, anvil(8)); seen from Postfix 3.7 on Debian 12`,
    wire: '450 4.7.1 Error: too many recipients from [192.0.2.1]',
    rcpt: 'rate_limited',
    note: 'A limit on our client, not this envelope: the probe backs off that MX and asks again later, never at once.'
  },
  {
    vendor: 'Postfix',
    source: `${POSTCONF} (virtual_mailbox_maps, unknown_virtual_mailbox_reject_code)`,
    wire: '550 5.1.1 <jane@example.com>: Recipient address rejected: User unknown in virtual mailbox table',
    rcpt: 'mailbox_not_found'
  },
  {
    vendor: 'Postfix',
    source: 'Postfix LOCAL_RECIPIENT_README, https://www.postfix.org/LOCAL_RECIPIENT_README.html',
    wire: '550 5.1.1 <jane@example.com>: Recipient address rejected: User unknown in local recipient table',
    rcpt: 'mailbox_not_found'
  },
  {
    vendor: 'Postfix',
    source: `${POSTCONF} (relay_recipient_maps, unknown_relay_recipient_reject_code)`,
    wire: '550 5.1.1 <jane@example.com>: Recipient address rejected: User unknown in relay recipient table',
    rcpt: 'mailbox_not_found'
  },
  {
    vendor: 'Postfix',
    source: `${POSTCONF} (reject_unauth_destination, relay_domains_reject_code)`,
    wire: '554 5.7.1 <jane@example.com>: Relay access denied',
    rcpt: 'policy_rejected'
  },
  {
    vendor: 'Postfix',
    source: 'Postfix access(5) REJECT, access_map_reject_code, https://www.postfix.org/access.5.html',
    wire: '554 5.7.1 <jane@example.com>: Recipient address rejected: Access denied',
    rcpt: 'policy_rejected',
    note: 'the defect: a policy refusal once read as mailbox_not_found'
  },
  {
    vendor: 'Postfix',
    source: 'postgrey(8), http://postgrey.schweikert.ch/',
    wire: '450 4.2.0 <jane@example.com>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/help/example.com.html',
    rcpt: 'greylisted'
  },
  {
    vendor: 'Postfix',
    source: `${POSTCONF} (reject_unknown_client_hostname)`,
    wire: '450 4.7.1 Client host rejected: cannot find your hostname, [192.0.2.1]',
    rcpt: 'ip_blocked',
    session: 'ip_blocked'
  },
  {
    vendor: 'Postfix',
    source: `${POSTCONF} (reject_unknown_reverse_client_hostname)`,
    wire: '450 4.7.1 Client host rejected: cannot find your reverse hostname, [192.0.2.1]',
    rcpt: 'ip_blocked',
    session: 'ip_blocked'
  },
  {
    vendor: 'Postfix',
    source: 'Postfix ADDRESS_VERIFICATION_README, https://www.postfix.org/ADDRESS_VERIFICATION_README.html',
    wire: '450 4.1.1 <jane@example.com>: Recipient address rejected: unverified address: Address verification in progress',
    rcpt: 'greylisted'
  },
  {
    vendor: 'Postfix',
    source: 'Postfix ADDRESS_VERIFICATION_README (unverified_recipient_reject_code = 550)',
    wire: '550 5.1.1 <jane@example.com>: Recipient address rejected: undeliverable address: host mx.example.com[203.0.113.7] said: 550 5.1.1 <jane@example.com>: Recipient address rejected: User unknown (in reply to RCPT TO command)',
    rcpt: 'mailbox_not_found'
  },
  {
    vendor: 'Postfix',
    source: `${POSTCONF} (smtpd_reject_unlisted_sender)`,
    wire: '550 5.1.0 <probe@verifier.example>: Sender address rejected: User unknown in virtual mailbox table',
    rcpt: 'policy_rejected',
    note: 'X.1.0 and "User unknown", but about our sender'
  },
  {
    vendor: 'Postfix',
    source: `${POSTCONF} (reject_unknown_sender_domain, unknown_address_reject_code)`,
    wire: '450 4.1.8 <probe@verifier.example>: Sender address rejected: Domain not found',
    rcpt: 'greylisted'
  },
  {
    vendor: 'Postfix',
    source: `${POSTCONF} (reject_sender_login_mismatch)`,
    wire: '553 5.7.1 <probe@verifier.example>: Sender address rejected: not owned by user jane',
    rcpt: 'policy_rejected'
  },
  { vendor: 'Postfix', source: `${POSTCONF} (smtpd_recipient_limit)`, wire: '452 4.5.3 Error: too many recipients', rcpt: 'too_many_recipients' },
  {
    vendor: 'Postfix',
    source: `${POSTCONF} (reject_non_fqdn_recipient)`,
    wire: '504 5.5.2 <jane>: Recipient address rejected: need fully-qualified address',
    rcpt: 'smtp_unavailable'
  },
  {
    vendor: 'Postfix',
    source: 'pypolicyd-spf (postfix-policyd-spf-python) README, https://launchpad.net/pypolicyd-spf',
    wire: '550 5.7.23 <jane@example.com>: Recipient address rejected: Message rejected due to: SPF fail - not authorized. Please see http://www.openspf.net/Why?s=mfrom;id=probe@verifier.example;ip=192.0.2.1;r=jane@example.com',
    rcpt: 'policy_rejected'
  },
  {
    vendor: 'Postfix',
    source: 'Dovecot documentation, quota_exceeded_message (LMTP), https://doc.dovecot.org/',
    wire: '552 5.2.2 <jane@example.com> Quota exceeded (mailbox for user is full)',
    rcpt: 'mailbox_full'
  },

  // Exim
  { vendor: 'Exim', source: `${EXIM} (verify = recipient)`, wire: '550 Unrouteable address', rcpt: 'mailbox_not_found' },
  {
    vendor: 'Exim',
    source: 'cPanel Exim configuration ("No Such User Here"), https://docs.cpanel.net/',
    wire: '550 No Such User Here',
    rcpt: 'mailbox_not_found'
  },
  {
    vendor: 'Exim',
    source: `${EXIM} (verify = sender, sender callout)`,
    wire: ['550-Verification failed for <probe@verifier.example>', '550-Unrouteable address', '550 Sender verify failed'],
    rcpt: 'policy_rejected',
    note: 'names "Unrouteable address", but of our sender'
  },
  {
    vendor: 'Exim',
    source: `${EXIM} (recipient callout)`,
    wire: ['550-Callout verification failed:', '550 550 5.1.1 <jane@example.com>: Recipient address rejected: User unknown in local recipient table'],
    rcpt: 'mailbox_not_found'
  },
  { vendor: 'Exim', source: `${EXIM} (default relay refusal)`, wire: '550 relay not permitted', rcpt: 'policy_rejected' },
  { vendor: 'Exim', source: `${EXIM} (ACL deny without a message)`, wire: '550 Administrative prohibition', rcpt: 'policy_rejected' },
  {
    vendor: 'Exim',
    source: `${EXIM} (dnslists example message)`,
    wire: '550 rejected because 192.0.2.1 is in a black list at zen.spamhaus.org',
    rcpt: 'ip_blocked'
  },
  {
    vendor: 'Exim',
    source: 'greylistd README (Exim integration), Debian package greylistd',
    wire: ['451-192.0.2.1 is not yet authorized to deliver mail from', '451 <probe@verifier.example> to <jane@example.com>. Please try later.'],
    rcpt: 'greylisted'
  },
  { vendor: 'Exim', source: `${EXIM} (defer)`, wire: '451 Temporary local problem - please try later', rcpt: 'greylisted' },

  // Sendmail
  { vendor: 'Sendmail', source: SENDMAIL, wire: '550 5.1.1 <jane@example.com>... User unknown', rcpt: 'mailbox_not_found' },
  { vendor: 'Sendmail', source: SENDMAIL, wire: '550 5.7.1 <jane@example.com>... Relaying denied', rcpt: 'policy_rejected' },
  { vendor: 'Sendmail', source: SENDMAIL, wire: '550 5.7.1 <jane@example.com>... Relaying denied. Proper authentication required.', rcpt: 'policy_rejected' },
  { vendor: 'Sendmail', source: `${SENDMAIL} (access database REJECT)`, wire: '550 5.7.1 Access denied', rcpt: 'policy_rejected', session: 'ip_blocked' },
  {
    vendor: 'Sendmail',
    source: `${SENDMAIL} (sender domain check)`,
    wire: '553 5.1.8 <probe@verifier.example>... Domain of sender address probe@verifier.example does not exist',
    rcpt: 'policy_rejected',
    note: '"does not exist", but X.1.8 is our sender'
  },
  {
    vendor: 'Sendmail',
    source: `${SENDMAIL} (sender domain check, temporary)`,
    wire: '451 4.1.8 Domain of sender address probe@verifier.example does not resolve',
    rcpt: 'greylisted'
  },
  { vendor: 'Sendmail', source: SENDMAIL, wire: '452 4.4.5 Insufficient disk space; try again later', rcpt: 'greylisted' },

  // qmail: the enhanced code comes last, "(#5.1.1)"
  {
    vendor: 'qmail',
    source: 'qmail-smtpd.c (err_nogateway), https://cr.yp.to/qmail.html',
    wire: "553 sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)",
    rcpt: 'policy_rejected'
  },
  {
    vendor: 'qmail',
    source: 'chkuser for qmail, http://www.interazioni.it/opensource/chkuser/',
    wire: '511 sorry, no mailbox here by that name (#5.1.1 - chkuser)',
    rcpt: 'mailbox_not_found'
  },
  { vendor: 'qmail', source: SITEPACKAGE, wire: '554 Sorry, no mailbox here by that name. (#5.1.1)', rcpt: 'mailbox_not_found' },

  // Microsoft 365 / Exchange Online / Outlook.com
  {
    vendor: 'Microsoft',
    source: 'Microsoft Learn, "Fix NDR error 550 5.1.10 in Exchange Online"',
    wire: '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient jane@example.com not found by SMTP address lookup',
    rcpt: 'mailbox_not_found'
  },
  {
    vendor: 'Microsoft',
    source: 'Microsoft Learn, "Fix NDR error 550 5.1.1 through 5.1.20 in Exchange Online"',
    wire: '550 5.1.1 RESOLVER.ADR.RecipNotFound; not found',
    rcpt: 'mailbox_not_found'
  },
  {
    vendor: 'Microsoft',
    source: 'Microsoft Learn, "Use Directory-Based Edge Blocking to reject messages sent to invalid recipients"',
    wire: '550 5.4.1 Recipient address rejected: Access denied. AS(201806281) [BN8NAM12FT012.eop-nam12.prod.protection.outlook.com]',
    rcpt: 'mailbox_not_found',
    note: 'provider exception: DBEB, a recipient not in the directory'
  },
  {
    vendor: 'Microsoft',
    source: `${MS_NDR} (5.4.1)`,
    wire: '550 5.4.1 Relay Access Denied',
    rcpt: 'smtp_unavailable',
    note: 'X.4.1 without the DBEB wording: routing, not the mailbox'
  },
  {
    vendor: 'Microsoft',
    source: 'Microsoft Learn, "Fix email delivery issues for error codes 5.7.606 through 5.7.649 in Exchange Online"',
    wire: '550 5.7.606 Access denied, banned sending IP [192.0.2.1]. To request removal from this list please visit https://sender.office.com/ and follow the directions. AS(1430)',
    rcpt: 'ip_blocked'
  },
  {
    vendor: 'Microsoft',
    source: MS_700,
    wire: '550 5.7.708 Service unavailable. Access denied, traffic not accepted from this IP. For more information please go to http://go.microsoft.com/fwlink/?LinkId=526653 AS(7171)',
    rcpt: 'ip_blocked'
  },
  {
    vendor: 'Microsoft',
    source: `${MS_NDR} (Spamhaus, AS(1450))`,
    wire: '550 5.7.1 Service unavailable, Client host [192.0.2.1] blocked using Spamhaus. To request removal from this list see https://www.spamhaus.org/query/ip/192.0.2.1 AS(1450)',
    rcpt: 'ip_blocked'
  },
  {
    vendor: 'Microsoft',
    source: `${MS_NDR} (Customer Block list)`,
    wire: '550 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using Customer Block list (AS16012607)',
    rcpt: 'ip_blocked'
  },
  {
    vendor: 'Microsoft',
    source: 'Microsoft Learn, "Fix NDR error 550 5.7.1 in Exchange Online"',
    wire: '550 5.7.1 RESOLVER.RST.AuthRequired; authentication required',
    rcpt: 'policy_rejected'
  },
  {
    vendor: 'Microsoft',
    source: 'Microsoft Learn, "Fix NDR error 550 5.7.1 in Exchange Online"',
    wire: '550 5.7.1 RESOLVER.RST.NotAuthorized; not authorized',
    rcpt: 'policy_rejected'
  },
  { vendor: 'Microsoft', source: MS_NDR, wire: '550 5.7.1 Delivery not authorized, message refused', rcpt: 'policy_rejected' },
  {
    vendor: 'Microsoft',
    source: 'Microsoft Learn, Exchange Server receive connectors (anonymous relay)',
    wire: '550 5.7.1 Unable to relay',
    rcpt: 'policy_rejected'
  },
  {
    vendor: 'Microsoft',
    source: 'Microsoft Learn, "Fix email delivery issues for error code 5.7.64 TenantAttribution in Exchange Online"',
    wire: '550 5.7.64 TenantAttribution; Relay Access Denied',
    rcpt: 'policy_rejected'
  },
  {
    vendor: 'Microsoft',
    source: MS_NDR,
    wire: '550 5.7.509 Access denied, sending domain verifier.example does not pass DMARC verification and has a DMARC policy of reject.',
    rcpt: 'policy_rejected'
  },
  {
    vendor: 'Microsoft',
    source: 'Microsoft Learn, "Fix email delivery issues for error codes 5.7.501 through 5.7.503"',
    wire: '550 5.7.501 Access denied, spam abuse detected',
    rcpt: 'policy_rejected'
  },
  {
    vendor: 'Microsoft',
    source: MS_NDR,
    wire: '550 5.7.505 Access denied, banned recipient',
    rcpt: 'policy_rejected',
    note: 'a banned recipient is a policy, not a missing mailbox'
  },
  {
    vendor: 'Microsoft',
    source: MS_700,
    wire: '550 5.7.750 Service unavailable. Client blocked from sending from unregistered domains',
    rcpt: 'policy_rejected'
  },
  {
    vendor: 'Microsoft',
    source: 'Microsoft Learn, "Fix NDR error 530 5.7.57 in Exchange Online"',
    wire: '530 5.7.57 Client was not authenticated to send anonymous mail during MAIL FROM',
    rcpt: 'policy_rejected',
    session: 'ip_blocked'
  },
  { vendor: 'Microsoft', source: `${MS_NDR} (5.1.8)`, wire: '550 5.1.8 Access denied, bad outbound sender', rcpt: 'policy_rejected' },
  { vendor: 'Microsoft', source: `${MS_NDR} (5.1.0)`, wire: '550 5.1.0 Sender denied', rcpt: 'policy_rejected', note: 'X.1.0 about our sender' },
  { vendor: 'Microsoft', source: `${MS_NDR} (5.2.2)`, wire: '552 5.2.2 Mailbox full', rcpt: 'mailbox_full' },
  {
    vendor: 'Microsoft',
    source: 'Microsoft Learn, "Fix email delivery issues for error code 451 4.7.500-699 (ASxxx) in Exchange Online"',
    wire: '451 4.7.500 Server busy. Please try again later from [192.0.2.1]. (AS761) [SN1NAM02FT010.eop-nam02.prod.protection.outlook.com]',
    rcpt: 'greylisted'
  },
  { vendor: 'Microsoft', source: MS_NDR, wire: '452 4.5.3 Too many recipients', rcpt: 'too_many_recipients' },
  {
    vendor: 'Microsoft',
    source: `${SMTP_CODES} (Outlook)`,
    wire: '550 5.5.0 Requested action not taken: mailbox unavailable.',
    rcpt: 'mailbox_not_found',
    note: 'Outlook.com words a missing mailbox under X.5.0: the wording decides'
  },
  { vendor: 'Microsoft', source: `${SITEPACKAGE} (Hotmail)`, wire: '550 Requested action not taken: mailbox unavailable', rcpt: 'mailbox_not_found' },
  {
    vendor: 'Microsoft',
    source: 'Outlook.com Postmaster, "Troubleshooting" (S3150), https://sendersupport.olc.protection.outlook.com/pm/troubleshooting.aspx',
    wire: "550 5.7.1 Unfortunately, messages from [192.0.2.1] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3150). You can also refer your provider to http://mail.live.com/mail/troubleshooting.aspx#errors.",
    rcpt: 'ip_blocked',
    session: 'ip_blocked'
  },

  // Google
  {
    vendor: 'Google',
    source: GOOGLE,
    wire: [
      '550-5.1.1 The email account that you tried to reach does not exist. Please try',
      "550-5.1.1 double-checking the recipient's email address for typos or",
      '550-5.1.1 unnecessary spaces. Learn more at',
      '550 5.1.1  https://support.google.com/mail/?p=NoSuchUser a1si1234567qkb.12 - gsmtp'
    ],
    rcpt: 'mailbox_not_found'
  },
  {
    vendor: 'Google',
    source: GOOGLE,
    wire: [
      '550-5.2.1 The email account that you tried to reach is disabled. Learn more at',
      '550 5.2.1  https://support.google.com/mail/?p=DisabledUser a1si1234567qkb.12 - gsmtp'
    ],
    rcpt: 'mailbox_disabled'
  },
  {
    vendor: 'Google',
    source: GOOGLE,
    wire: [
      '452-4.2.2 The email account that you tried to reach is over quota. Please direct',
      '452 4.2.2 the recipient to https://support.google.com/mail/?p=OverQuotaTemp a1si1234567qkb.12 - gsmtp'
    ],
    rcpt: 'mailbox_full'
  },
  { vendor: 'Google', source: GOOGLE, wire: '552 5.2.2 The email account that you tried to reach is over quota.', rcpt: 'mailbox_full' },
  {
    vendor: 'Google',
    source: GOOGLE,
    wire: [
      '550-5.7.1 [192.0.2.1      12] Our system has detected an unusual rate of',
      '550-5.7.1 unsolicited mail originating from your IP address. To protect our',
      '550-5.7.1 users from spam, mail sent from your IP address has been blocked.',
      '550 5.7.1 Please visit https://support.google.com/mail/?p=UnsolicitedIPError to review our Bulk Email Senders Guidelines. a1si1234567qkb.12 - gsmtp'
    ],
    rcpt: 'ip_blocked'
  },
  { vendor: 'Google', source: GOOGLE, wire: '421 4.7.0 Try again later, closing connection.', rcpt: 'smtp_unavailable', session: 'smtp_unavailable' },
  {
    vendor: 'Google',
    source: GOOGLE,
    wire: [
      '421-4.7.0 [192.0.2.1      15] Our system has detected an unusual rate of',
      '421-4.7.0 unsolicited mail originating from your IP address. To protect our',
      '421 4.7.0 users from spam, mail sent from your IP address has been temporarily rate limited. - gsmtp'
    ],
    rcpt: 'smtp_unavailable',
    session: 'ip_blocked'
  },
  {
    vendor: 'Google',
    source: 'Google, "Email sender guidelines" (5.7.26 rejections), https://support.google.com/a/answer/81126',
    wire: [
      '550-5.7.26 This mail is unauthenticated, which poses a security risk to the',
      '550-5.7.26 sender and Gmail users, and has been blocked. The sender must',
      '550-5.7.26 authenticate with at least one of SPF or DKIM. For this message,',
      '550 5.7.26 DKIM checks did not pass and SPF check for [verifier.example] did not pass with ip: [192.0.2.1]. - gsmtp'
    ],
    rcpt: 'policy_rejected'
  },
  {
    vendor: 'Google',
    source: GOOGLE,
    wire: "550 5.7.26 Unauthenticated email from verifier.example is not accepted due to domain's DMARC policy. Please contact the administrator of verifier.example domain if this was a legitimate mail.",
    rcpt: 'policy_rejected'
  },
  {
    vendor: 'Google',
    source: GOOGLE,
    wire: "550 5.7.1 The IP you're using to send mail is not authorized to send email directly to our servers. Please use the SMTP relay at your service provider instead.",
    rcpt: 'ip_blocked'
  },
  {
    vendor: 'Google',
    source: GOOGLE,
    wire: '550 5.7.1 The user or domain that you are sending to (or from) has a policy that prohibited the mail that you sent. Please contact your domain administrator for further details.',
    rcpt: 'policy_rejected'
  },
  {
    vendor: 'Google',
    source: GOOGLE,
    wire: '550 5.7.25 The IP address sending this message does not have a PTR record setup, or the corresponding forward DNS entry does not point to the sending IP. As a policy, Gmail does not accept messages from IPs with missing PTR records.',
    rcpt: 'ip_blocked'
  },
  { vendor: 'Google', source: GOOGLE, wire: '550 5.7.0 Mail relay denied.', rcpt: 'policy_rejected' },
  { vendor: 'Google', source: GOOGLE, wire: '550 5.7.1 Email quota exceeded.', rcpt: 'policy_rejected', note: 'quota wording under X.7.1: the code wins' },
  {
    vendor: 'Google',
    source: GOOGLE,
    wire: '550 5.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered.',
    rcpt: 'smtp_unavailable',
    note: 'provider exception: a rate limit under X.2.1'
  },
  {
    vendor: 'Google',
    source: GOOGLE,
    wire: '450 4.2.1 The user you are trying to contact is receiving mail too quickly. Please resend your message at a later time.',
    rcpt: 'greylisted'
  },
  { vendor: 'Google', source: GOOGLE, wire: '452 4.5.3 Your message has too many recipients.', rcpt: 'too_many_recipients' },
  {
    vendor: 'Google',
    source: GOOGLE,
    wire: "553 5.1.2 We weren't able to find the recipient domain. Please check for any spelling errors, and make sure you didn't enter any spaces, periods, or other punctuation after the recipient's email address.",
    rcpt: 'rejected_email'
  },
  { vendor: 'Google', source: GOOGLE, wire: '553 5.1.3 The recipient address <jane@example.com> is not a valid RFC-5321 address.', rcpt: 'rejected_email' },
  { vendor: 'Google', source: GOOGLE, wire: '451 4.3.0 Mail server temporarily rejected message.', rcpt: 'greylisted' },
  { vendor: 'Google', source: GOOGLE, wire: '503 5.5.1 MAIL first.', rcpt: 'smtp_unavailable' },

  // Yahoo / AOL
  {
    vendor: 'Yahoo',
    source: YAHOO,
    wire: "553 5.7.1 [BL21] Connections will not be accepted from 192.0.2.1, because the ip is in Spamhaus's list; see https://postmaster.yahooinc.com/error-codes",
    rcpt: 'ip_blocked',
    session: 'ip_blocked'
  },
  {
    vendor: 'Yahoo',
    source: YAHOO,
    wire: '553 5.7.1 [BL23] Connections not accepted from IP addresses on Spamhaus XBL; see https://postmaster.yahooinc.com/error-codes',
    rcpt: 'ip_blocked',
    session: 'ip_blocked'
  },
  {
    vendor: 'Yahoo',
    source: YAHOO,
    wire: '554 5.7.9 Message not accepted for policy reasons.  See https://postmaster.yahooinc.com/error-codes',
    rcpt: 'policy_rejected'
  },
  {
    vendor: 'Yahoo',
    source: YAHOO,
    wire: '421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes',
    rcpt: 'smtp_unavailable',
    session: 'ip_blocked'
  },
  {
    vendor: 'Yahoo',
    source: 'Yahoo Help, "421 4.7.1 [TS03] All messages from x.x.x.x permanently deferred"',
    wire: '421 4.7.1 [TS03] All messages from 192.0.2.1 will be permanently deferred; Retrying will NOT succeed. See https://postmaster.yahooinc.com/error-codes',
    rcpt: 'smtp_unavailable',
    session: 'ip_blocked'
  },
  {
    vendor: 'Yahoo',
    source: YAHOO,
    wire: '553 5.7.2 [TSS09] All messages from 192.0.2.1 will be permanently deferred; Retrying will NOT succeed. See https://postmaster.yahooinc.com/error-codes',
    rcpt: 'ip_blocked',
    session: 'ip_blocked'
  },
  {
    vendor: 'Yahoo',
    source: YAHOO_HELP,
    wire: "554 delivery error: dd This user doesn't have a yahoo.com account (jane@yahoo.com) [0] - mta1234.mail.gq1.yahoo.com",
    rcpt: 'mailbox_not_found'
  },
  { vendor: 'Yahoo', source: `${SMTP_CODES} (Yahoo, 552)`, wire: '552 1 Requested mail action aborted, mailbox not found', rcpt: 'mailbox_not_found' },
  {
    vendor: 'Yahoo',
    source: YAHOO,
    wire: '554 delivery error: dd Sorry your message to jane@yahoo.com cannot be delivered. This mailbox is disabled (554.30). - mta1234.mail.gq1.yahoo.com',
    rcpt: 'mailbox_disabled'
  },
  {
    vendor: 'Yahoo',
    source: 'Yahoo Help, "My email is being blocked by Yahoo! Mail" (abuse-57)',
    wire: '554 delivery error: dd Sorry, your message to jane@yahoo.com cannot be delivered. This account is over quota.',
    rcpt: 'mailbox_full'
  },
  { vendor: 'Yahoo', source: YAHOO_HELP, wire: '451 VS1-IP Excessive unknown recipients - possible Open Relay (#4.1.8)', rcpt: 'greylisted' },
  {
    vendor: 'Yahoo',
    source: YAHOO,
    wire: '550 5.7.9 This mail has been blocked because the sender is unauthenticated. Yahoo requires all senders to authenticate with either SPF or DKIM.',
    rcpt: 'policy_rejected'
  },

  // Blocklists (as Postfix and the lists' own help pages word a listing)
  {
    vendor: 'Blocklists',
    source: 'Spamhaus, "Blocklist removal center" / Postfix reject_rbl_client, https://www.spamhaus.org/',
    wire: '554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/192.0.2.1',
    rcpt: 'ip_blocked',
    session: 'ip_blocked'
  },
  {
    vendor: 'Blocklists',
    source: 'Spamhaus DBL / Postfix reject_rhsbl_sender',
    wire: '554 5.7.1 Service unavailable; Sender address [probe@verifier.example] blocked using dbl.spamhaus.org; https://www.spamhaus.org/query/domain/verifier.example',
    rcpt: 'ip_blocked'
  },
  {
    vendor: 'Blocklists',
    source: 'Barracuda Central, "Barracuda Reputation Block List", https://www.barracudacentral.org/',
    wire: '554 Service unavailable; Client host [192.0.2.1] blocked using Barracuda Reputation; http://www.barracudanetworks.com/reputation/?r=1&ip=192.0.2.1',
    rcpt: 'ip_blocked',
    session: 'ip_blocked'
  },
  {
    vendor: 'Blocklists',
    source: 'SpamCop FAQ, "What is the SpamCop Blocking List (SCBL)?", https://www.spamcop.net/bl.shtml',
    wire: '554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using bl.spamcop.net; Blocked - see https://www.spamcop.net/bl.shtml?192.0.2.1',
    rcpt: 'ip_blocked'
  },
  {
    vendor: 'Blocklists',
    source: 'SORBS lookup, http://www.sorbs.net/lookup.shtml',
    wire: '554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using dnsbl.sorbs.net; Currently Sending Spam See: http://www.sorbs.net/lookup.shtml?192.0.2.1',
    rcpt: 'ip_blocked'
  },
  {
    vendor: 'Blocklists',
    source: 'UCEPROTECT, http://www.uceprotect.net/en/rblcheck.php',
    wire: '554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using dnsbl-1.uceprotect.net; IP 192.0.2.1 is UCEPROTECT-Level 1 listed.',
    rcpt: 'ip_blocked'
  },
  {
    vendor: 'Blocklists',
    source: 'Yandex Help, "Report on non-delivery to another (non-Yandex) address", https://yandex.com/support/mail/bounces/other.html',
    wire: '550 5.7.1 SPF check failed: IP_host is not authorized to send in the name of domain_name.',
    rcpt: 'policy_rejected'
  },

  // Gateways: Mimecast, Proofpoint, Barracuda, Cisco, Trend Micro
  { vendor: 'Gateways', source: MIMECAST, wire: '550 Invalid Recipient - https://community.mimecast.com/docs/DOC-1369#550', rcpt: 'mailbox_not_found' },
  { vendor: 'Gateways', source: MIMECAST, wire: '550 5.7.1 Rejected by Mimecast policy', rcpt: 'policy_rejected' },
  {
    vendor: 'Gateways',
    source: MIMECAST,
    wire: '550 Administrative prohibition - envelope blocked - https://community.mimecast.com/docs/DOC-1369#550',
    rcpt: 'policy_rejected'
  },
  {
    vendor: 'Gateways',
    source: MIMECAST,
    wire: '550 Envelope blocked - User Entry - https://community.mimecast.com/docs/DOC-1369#550',
    rcpt: 'policy_rejected',
    note: "a recipient's own block list, not a missing mailbox"
  },
  {
    vendor: 'Gateways',
    source: MIMECAST,
    wire: '554 Email rejected due to security policies - https://community.mimecast.com/docs/DOC-1369#554',
    rcpt: 'policy_rejected'
  },
  {
    vendor: 'Gateways',
    source: MIMECAST,
    wire: '451 Internal resource temporarily unavailable - https://community.mimecast.com/docs/DOC-1369#451',
    rcpt: 'greylisted'
  },
  {
    vendor: 'Gateways',
    source: 'Proofpoint, "IP reputation lookup", https://ipcheck.proofpoint.com/',
    wire: '554 5.7.1 Blocked - see https://ipcheck.proofpoint.com/?ip=192.0.2.1',
    rcpt: 'ip_blocked',
    session: 'ip_blocked'
  },
  {
    vendor: 'Gateways',
    source: 'Proofpoint, "IP reputation lookup", https://ipcheck.proofpoint.com/',
    wire: '554 5.7.0 Blocked - see https://ipcheck.proofpoint.com/?ip=192.0.2.1',
    rcpt: 'ip_blocked'
  },
  { vendor: 'Gateways', source: `${SMTP_CODES} (Proofpoint)`, wire: '550 5.1.1 User Unknown', rcpt: 'mailbox_not_found' },
  { vendor: 'Gateways', source: `${SMTP_CODES} (Barracuda)`, wire: '550 No such user (jane@example.com)', rcpt: 'mailbox_not_found' },
  { vendor: 'Gateways', source: `${SMTP_CODES} (Barracuda)`, wire: '550 Blocked', rcpt: 'policy_rejected', note: 'a block says nothing of the mailbox' },
  {
    vendor: 'Gateways',
    source: `${SMTP_CODES} (Barracuda)`,
    wire: '550 cuda_nsu 5.1.1 <jane@example.com> Recipient address rejected: User unknown',
    rcpt: 'mailbox_not_found',
    note: 'the enhanced code is not first: the wording decides'
  },
  {
    vendor: 'Gateways',
    source: 'Cisco Secure Email (IronPort) HAT, default SBRS rejection',
    wire: "554 Your access to this mail system has been rejected due to the sending MTA's poor reputation. If you believe that this failure is in error, please contact the intended recipient via alternate means.",
    rcpt: 'ip_blocked',
    session: 'ip_blocked'
  },
  {
    vendor: 'Gateways',
    source: 'Trend Micro Email Reputation Services, https://ers.trendmicro.com/',
    wire: '550 5.7.1 Mail from 192.0.2.1 blocked using Trend Micro RBL+. Please see http://www.mail-abuse.com/cgi-bin/lookup?ip_address=192.0.2.1',
    rcpt: 'ip_blocked'
  },
  {
    vendor: 'Gateways',
    source: 'everycloud support, "Workspace classification codes"',
    wire: '554 5.7.1 unknown domain or unknown recipient (LDAP check)',
    rcpt: 'policy_rejected',
    note: 'not-found wording under X.7.1: unknown, by rule'
  },
  {
    vendor: 'Gateways',
    source: 'Spambrella FAQ, "Common Email Delivery Error Codes"',
    wire: '550 5.7.1 <jane@example.com>: Recipient address rejected: User email address is marked as invalid',
    rcpt: 'policy_rejected',
    note: 'not-found wording under X.7.1: unknown, by rule'
  },

  // Other providers
  {
    vendor: 'Other providers',
    source: `${SMTP_CODES} (Yandex)`,
    wire: '550 5.7.1 No such user!',
    rcpt: 'policy_rejected',
    note: 'Yandex says a missing user under X.7.1: unknown, by rule (a lost invalid, never a false one)'
  },
  {
    vendor: 'Other providers',
    source: `${SMTP_CODES} (AT&T)`,
    wire: '550 5.2.1 <JANE@PRODIGY.NET>... Addressee unknown, relay=[192.0.2.1]',
    rcpt: 'mailbox_disabled',
    note: 'X.2.1 wins over the wording; invalid either way'
  },
  {
    vendor: 'Other providers',
    source: `${SMTP_CODES} (AT&T)`,
    wire: '550 5.7.1 Connections not accepted from servers without a valid sender domain. ## Fix reverse DNS for 192.0.2.1',
    rcpt: 'ip_blocked'
  },
  { vendor: 'Other providers', source: `${SITEPACKAGE} (GMX)`, wire: '550 5.1.1 <jane@gmx.net>... User is unknown', rcpt: 'mailbox_not_found' },
  { vendor: 'Other providers', source: `${SITEPACKAGE} (GMX)`, wire: '550 5.2.1 <jane@gmx.net>... User is inactive', rcpt: 'mailbox_disabled' },
  {
    vendor: 'Other providers',
    source: 'GMX, "Sender guidelines" (banner of a listed IP), https://www.gmx.net/mail/senderguidelines',
    wire: [
      '554-gmx.net (mxgmx116) Nemesis ESMTP Service not available',
      '554-No SMTP service',
      '554-IP address is black listed.',
      '554 For explanation visit https://www.gmx.net/mail/senderguidelines?ip=192.0.2.1&c=bl'
    ],
    rcpt: 'ip_blocked',
    session: 'ip_blocked'
  },
  {
    vendor: 'Other providers',
    source: `${SITEPACKAGE} (Web.de)`,
    wire: '550 Benutzer hat das Speichervolumen ueberschritten. / User has exhausted allowed storage space.',
    rcpt: 'mailbox_full'
  },
  {
    vendor: 'Other providers',
    source: `${SITEPACKAGE} (Lycos)`,
    wire: '550 <jane@lycos.de>: Recipient address rejected: Account Closed',
    rcpt: 'mailbox_disabled'
  },
  {
    vendor: 'Other providers',
    source: SITEPACKAGE,
    wire: '550 5.2.0 No such mailbox',
    rcpt: 'mailbox_not_found',
    note: 'X.2.0 is uninformative: the wording decides'
  },
  {
    vendor: 'Other providers',
    source: `${SITEPACKAGE} (Lotus Domino)`,
    wire: '550 User jane@example.com not listed in Domino Directory',
    rcpt: 'mailbox_not_found'
  },
  {
    vendor: 'Other providers',
    source: `${SITEPACKAGE} (CompuServe)`,
    wire: '554 Refused. Your reverse DNS entry contains your IP address and a country code.',
    rcpt: 'ip_blocked',
    session: 'ip_blocked'
  },
  { vendor: 'Other providers', source: SITEPACKAGE, wire: '550 5.7.1 Requested action not taken: message refused', rcpt: 'policy_rejected' },
  {
    vendor: 'Other providers',
    source: `${SMTP_CODES} (Mail.ru)`,
    wire: '550 Message was not accepted -- invalid mailbox.  Local mailbox jane@mail.ru is unavailable: user not found',
    rcpt: 'mailbox_not_found'
  }
]

const lines = (e: Entry): string[] => (typeof e.wire === 'string' ? [e.wire] : e.wire)
const verdictOf = (o: RcptOutcome): Verdict => (o === 'accepted' ? 'valid' : VERDICT_OF[refusalReason(o)])
/** Class and subject of the enhanced code, where it stands first or (qmail) last in parentheses. */
const classSubject = (text: string): string | null =>
  /^(?:\d{3}[ -])?([245]\.\d{1,3})\.\d{1,3}\b/.exec(text)?.[1] ?? /\(#([245]\.\d{1,3})\.\d{1,3}\b/.exec(text)?.[1] ?? null

t.test('every corpus reply gets its expected outcome', async t => {
  for (const e of corpus) {
    const reply = parseReply(lines(e))
    t.equal(classifyRcpt(reply), e.rcpt, `${lines(e).join(' | ')} (${e.source})${e.note ? ` — ${e.note}` : ''}`)
    if (e.session) t.equal(classifySessionRefusal(reply), e.session, `before RCPT: ${lines(e)[0]}`)
  }
})

t.test('no X.7.x reply in the corpus makes an address invalid', async t => {
  const policy = corpus.filter(e => classSubject(lines(e)[0]) === '5.7' || classSubject(lines(e).join(' ')) === '5.7')
  t.ok(policy.length >= 30, `${policy.length} security or policy replies`)
  for (const e of policy) {
    const outcome = classifyRcpt(parseReply(lines(e)))
    t.not(verdictOf(outcome), 'invalid', `${lines(e)[0]} → ${outcome}`)
    t.ok(outcome === 'ip_blocked' || outcome === 'policy_rejected', `${lines(e)[0]} is a refusal of us or a policy, ${outcome}`)
  }
})

t.test('any corpus wording under an X.7.x code is never invalid', async t => {
  // The code decides, whatever the text says (a "No such user" under 5.7.1 included).
  for (const e of corpus) {
    const { message } = parseReply(lines(e))
    for (const enhanced of ['5.7.0', '5.7.1', '5.7.9', '5.7.26', '5.7.606']) {
      for (const code of [550, 553, 554]) {
        const outcome = classifyRcpt({ code, enhanced, message })
        if (verdictOf(outcome) === 'invalid') t.fail(`${code} ${enhanced} ${message} → ${outcome}`)
      }
    }
  }
  t.pass('none invalid')
})

t.test('4xx replies of the corpus are never invalid', async t => {
  for (const e of corpus.filter(e => lines(e)[0].startsWith('4'))) {
    t.not(verdictOf(classifyRcpt(parseReply(lines(e)))), 'invalid', lines(e)[0])
  }
})

t.test('the corpus is large and wide', async t => {
  const byVendor: Record<string, number> = {}
  for (const e of corpus) byVendor[e.vendor] = (byVendor[e.vendor] ?? 0) + 1
  t.comment(
    `corpus: ${corpus.length} replies; ${Object.entries(byVendor)
      .map(([v, n]) => `${v} ${n}`)
      .join(', ')}`
  )
  t.ok(corpus.length >= 60)
  t.ok(corpus.every(e => e.source.length > 0))
  t.equal(Object.keys(byVendor).length, 11, 'eleven kinds of receiver')
})
