import { createHash } from 'node:crypto'

/**
 * The catch-all probe address of a domain: a local part no person would have, stable per
 * domain and day so that a greylisting server recognises the retry.
 */
export function catchAllAddress(domain: string, day = new Date().toISOString().slice(0, 10)): string {
  return `zq${createHash('sha256').update(`${domain}|${day}|catch-all`).digest('hex').slice(0, 18)}@${domain}`
}
