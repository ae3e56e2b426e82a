import type { FastifyRequest } from 'fastify'

/**
 * Whether a cookie set on this request must be `Secure` (RFC 6265 §4.1.2.5): always, except
 * on plain HTTP to a local host (development, tests).
 * Used by every route that sets a cookie (sign-in's refresh cookie, OAuth consent's).
 */
export function secureCookie(request: FastifyRequest): boolean {
  return !(request.protocol === 'http' && /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/.test(request.host))
}
