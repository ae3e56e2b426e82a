import ipaddr from 'ipaddr.js'
import { DomainError } from '../shared.ts'

/** Longest accepted endpoint URL (characters). */
const MAX_URL_LENGTH = 2048

/**
 * Whether an IP address is on the public internet: ipaddr.js classifies it as `unicast`
 * (IPv4-mapped IPv6 addresses are judged as the IPv4 they carry). Loopback, private
 * (RFC 1918, RFC 4193), link-local, CGNAT, multicast, reserved, documentation,
 * IPv4-compatible (::/96) and unspecified ranges are not.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false
  let parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address()
    // IPv4-compatible addresses (::/96, deprecated by RFC 4291) are not public either.
    else if (v6.parts.slice(0, 6).every(p => p === 0)) return false
  }
  return parsed.range() === 'unicast'
}

/**
 * Validates a webhook endpoint URL (docs/design/architecture.md `WEBHOOK_ALLOW_PRIVATE_TARGETS`): an
 * absolute `https:` URL (`http:` too when private targets are allowed), no user name or
 * password, at most 2,048 characters; unless private targets are allowed, a literal IP
 * must be public and the host may not be `localhost` or end in `.localhost`, `.local` or
 * `.internal`. Names are checked again against the addresses they resolve to at delivery.
 * @returns the normalized URL (WHATWG serialization).
 * @throws DomainError invalid `<operation>.invalid_url`.
 */
export function validateTargetUrl(operation: string, raw: string, allowPrivate: boolean): string {
  const fail = (why: string): never => {
    throw new DomainError('invalid', `${operation}.invalid_url`, `url ${why}`)
  }
  if (raw.length > MAX_URL_LENGTH) fail(`must be at most ${MAX_URL_LENGTH} characters`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return fail('must be an absolute URL')
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) fail(allowPrivate ? 'must use http or https' : 'must use https')
  if (url.username !== '' || url.password !== '') fail('must not carry a user name or password')
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase()
  if (host === '') fail('must name a host')
  if (!allowPrivate) {
    if (ipaddr.isValid(host) && !isPublicAddress(host)) fail('must not point at a private, loopback or reserved address')
    if (host === 'localhost' || /\.(localhost|local|internal)$/.test(host)) fail('must not point at a local host name')
  }
  return url.toString()
}
