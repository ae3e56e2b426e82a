import { domainToASCII } from 'node:url'

/**
 * The de-duplication key of an address: trimmed, NFC, lower-cased, the domain in ASCII
 * (IDNA, RFC 5891). It merges at least what the service merges (the service keeps the
 * local part's case), so every address sent is new to the batch; `Jane@x.com` after
 * `jane@x.com` is a duplicate row here.
 */
export function addressKey(text: string): string {
  const t = text.trim().normalize('NFC')
  const at = t.lastIndexOf('@')
  if (at <= 0 || at === t.length - 1) return `~${t.toLowerCase()}`
  const domain = t.slice(at + 1).toLowerCase()
  return `${t.slice(0, at).toLowerCase()}@${domainToASCII(domain) || domain}`
}
