import { DomainError } from '../shared.ts'
import { WEBHOOK_EVENTS, type WebhookEventKind } from './events.ts'

export function checkEvents(operation: string, events: string[]): WebhookEventKind[] {
  if (events.length === 0) throw new DomainError('invalid', `${operation}.empty_events`, 'events must not be empty')
  const unknown = events.filter(e => !(WEBHOOK_EVENTS as readonly string[]).includes(e))
  if (unknown.length > 0)
    throw new DomainError('invalid', `${operation}.invalid_events`, `unknown events: ${unknown.join(', ')}; known: ${WEBHOOK_EVENTS.join(', ')}`)
  return WEBHOOK_EVENTS.filter(e => events.includes(e))
}

export function checkDescription(operation: string, description: string | null | undefined): string | null | undefined {
  if (description === undefined || description === null) return description
  const d = description.trim()
  if (d.length > MAX_DESCRIPTION)
    throw new DomainError('invalid', `${operation}.invalid_description`, `description must be at most ${MAX_DESCRIPTION} characters`)
  return d === '' ? null : d
}

/** Longest endpoint description (characters). */
const MAX_DESCRIPTION = 500
