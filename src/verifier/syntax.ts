import { domainToASCII } from 'node:url'
import { parse as parseDomain } from 'tldts'

/** Result of parsing one address. */
export type ParsedAddress =
  | { ok: true; local: string; domain: string; ascii_domain: string; normalized: string; quoted: boolean; eai: boolean }
  | { ok: false; detail: string }

// RFC 5322 §3.2.3 atext, extended by RFC 6531 §3.3 with UTF8-non-ascii.
const ATEXT = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u0080-\u{10FFFF}]+$/u
// Non-ASCII code points that are no letters of an address: spaces, controls, format
// characters, surrogates, private use and unassigned (RFC 6532 §3.1, RFC 8264 §9.1).
const UNSAFE = /[\p{White_Space}\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}]/u
// Special-use and non-DNS names that mail cannot be sent to (RFC 6761, 6762, 7686, 9476, 8375).
const SPECIAL_USE_TLDS = new Set(['arpa', 'local', 'localhost', 'onion', 'test', 'invalid', 'example', 'alt', 'internal'])
// ASCII characters allowed in a domain name before IDNA mapping: letters, digits, hyphen, dot.
const DOMAIN_ASCII_BAD = /[\x00-\x2C\x2F\x3A-\x40\x5B-\x60\x7B-\x7F]/
// RFC 5321 §4.1.2 qtextSMTP (%d32-33 / %d35-91 / %d93-126) and RFC 6531 UTF8-non-ascii.
const QTEXT = /^[\x20\x21\x23-\x5B\x5D-\x7E\u0080-\u{10FFFF}]$/u
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

const octets = (s: string): number => Buffer.byteLength(s, 'utf8')

function checkLocal(local: string): string | null {
  if (local.length === 0) return 'empty local part'
  if (octets(local) > 64) return 'local part longer than 64 octets (RFC 5321 §4.5.3.1.1)'
  if (UNSAFE.test(local.replace(/[\x20-\x7E]/g, ''))) return 'space, control or unassigned character in local part'
  if (local.startsWith('"')) {
    if (local.length < 2 || !local.endsWith('"')) return 'unterminated quoted local part'
    if (local.length === 2) return 'empty quoted local part'
    const body = [...local.slice(1, -1)]
    for (let i = 0; i < body.length; i++) {
      const ch = body[i]
      if (ch === '\\') {
        const next = body[++i]
        if (next === undefined || !/^[\x20-\x7E]$/.test(next)) return 'invalid quoted-pair in local part (RFC 5321 §4.1.2)'
      } else if (!QTEXT.test(ch)) {
        return 'invalid character in quoted local part (RFC 5321 §4.1.2)'
      }
    }
    return null
  }
  for (const atom of local.split('.')) {
    if (atom.length === 0) return 'empty atom in local part: leading, trailing or double dot (RFC 5321 §4.1.2 Dot-string)'
    // Checked in NFD too, so a composed character cannot smuggle in a special ("≮" is "<" + U+0338).
    if (!ATEXT.test(atom) || !ATEXT.test(atom.normalize('NFD'))) return 'invalid character in local part (RFC 5322 §3.2.3 atext)'
  }
  return null
}

// Domain checks are pure and lists repeat domains: remember recent answers.
const domainMemo = new Map<string, { ascii: string } | { error: string }>()

function checkDomain(domain: string): { ascii: string } | { error: string } {
  const hit = domainMemo.get(domain)
  if (hit) return hit
  const r = checkDomainUncached(domain)
  if (domainMemo.size >= 50_000) domainMemo.clear()
  domainMemo.set(domain, r)
  return r
}

function checkDomainUncached(domain: string): { ascii: string } | { error: string } {
  if (domain.length === 0) return { error: 'empty domain' }
  if (domain.startsWith('[')) return { error: 'address literals cannot be verified (RFC 5321 §4.1.3); a domain name is required' }
  if (DOMAIN_ASCII_BAD.test(domain) || UNSAFE.test(domain)) return { error: 'invalid character in domain' }
  if (domain.endsWith('.')) return { error: 'trailing dot in domain (RFC 5321 §4.1.2 Domain)' }
  const ascii = domainToASCII(domain)
  if (ascii === '') return { error: 'domain is not a valid internationalized domain name (IDNA)' }
  if (ascii.length > 253) return { error: 'domain longer than 253 octets (RFC 1035 §2.3.4)' }
  const labels = ascii.split('.')
  if (labels.length < 2) return { error: 'domain must be fully qualified' }
  for (const label of labels) {
    if (!LDH_LABEL.test(label)) return { error: `invalid domain label "${label}" (RFC 1035 §2.3.1, RFC 5890)` }
  }
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return { error: 'top-level domain cannot be numeric' }
  if (SPECIAL_USE_TLDS.has(labels[labels.length - 1]) || ascii.endsWith('.home.arpa')) return { error: 'special-use domain (RFC 6761)' }
  const psl = parseDomain(ascii, { allowPrivateDomains: true })
  if (psl.isIp) return { error: 'IP address in place of a domain' }
  if (!(psl.isIcann || psl.isPrivate)) return { error: `"${psl.publicSuffix ?? ''}" is not a public suffix` }
  if (!psl.domain) return { error: 'domain is a public suffix itself, not a registrable domain' }
  return { ascii }
}

/**
 * Parses an address against RFC 5321 §4.1.2 (Mailbox: Dot-string or Quoted-string local
 * part, domain), §4.5.3.1 (local part ≤ 64 octets, path ≤ 256 so address ≤ 254 octets),
 * RFC 6531 (UTF-8 local parts), RFC 5890/UTS 46 (IDN domains → A-labels) and the public
 * suffix list (the domain must be registrable under a known suffix). No network.
 * `normalized` keeps the local part as sent (in NFC) and lower-cases the domain in ASCII.
 */
export function parseAddress(input: string): ParsedAddress {
  if (typeof input !== 'string' || input.length === 0) return { ok: false, detail: 'empty address' }
  if (/[\r\n\0]/.test(input)) return { ok: false, detail: 'control characters in address' }
  const at = input.lastIndexOf('@')
  if (at < 0) return { ok: false, detail: 'missing @' }
  // Local parts are compared in Unicode Normalization Form C (RFC 6532 §3.1).
  const local = input.slice(0, at).normalize('NFC')
  const domain = input.slice(at + 1)
  const localError = checkLocal(local)
  if (localError) return { ok: false, detail: localError }
  if (!local.startsWith('"') && local.includes('@')) return { ok: false, detail: 'unquoted @ in local part' }
  const d = checkDomain(domain)
  if ('error' in d) return { ok: false, detail: d.error }
  const normalized = `${local}@${d.ascii}`
  if (octets(normalized) > 254 || octets(input) > 254) return { ok: false, detail: 'address longer than 254 octets (RFC 5321 §4.5.3.1.3)' }
  return { ok: true, local, domain, ascii_domain: d.ascii, normalized, quoted: local.startsWith('"'), eai: /[^\x00-\x7F]/.test(local) }
}
