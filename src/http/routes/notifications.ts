import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { feed, feedEntryAt, NOTIFICATION_KINDS } from '../../projections/notifications.ts'
import { markNotificationsSeen } from '../../commands/notification/mark-notifications-seen.ts'
import { principalOf } from '../plugins/auth.ts'
import { HttpProblem } from '../problem.ts'
import { BODY_PROBLEMS, Timestamp, problems } from '../schemas.ts'
import type { HttpRuntime } from '../runtime.ts'

/** Feed page size (interface: default 24, clamped to 1..96). */
const FEED_DEFAULT_LIMIT = 24
const FEED_MAX_LIMIT = 96

/**
 * A cursor is opaque to clients: base64url of `n:<position>`, the entry's global
 * position in the event log. Anything else is malformed (a 400).
 */
function encodeCursor(position: number): string {
  return Buffer.from(`n:${position}`).toString('base64url')
}

/** The position a cursor names, or null when it is malformed. */
function decodeCursor(cursor: string): number | null {
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(cursor)) return null
  const m = /^n:(0|[1-9]\d{0,15})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'))
  if (!m) return null
  const n = Number(m[1])
  return Number.isSafeInteger(n) ? n : null
}

const Cursor = z
  .string()
  .transform((s, ctx) => {
    const n = decodeCursor(s)
    if (n === null) {
      ctx.addIssue({ code: 'custom', message: 'malformed cursor: pass a cursor this API returned' })
      return z.NEVER
    }
    return n
  })
  .meta({ description: 'opaque cursor from a previous answer', examples: ['bjoxMjM0'] })

const FeedQuery = z.object({
  limit: z
    .string()
    .regex(/^-?\d{1,12}$/, 'must be an integer')
    .transform(v => Math.min(FEED_MAX_LIMIT, Math.max(1, Number(v))))
    .optional()
    .meta({ type: 'integer', pattern: undefined, description: 'page size, default 24, clamped to 1..96' }),
  cursor: Cursor.optional().meta({ description: 'a previous `next_cursor`: the page after it; absent starts at the newest' })
})

const Notification = z
  .object({
    cursor: z.string().meta({ description: "this entry's cursor (for `POST /api/notifications/seen`)" }),
    kind: z.enum(NOTIFICATION_KINDS),
    message: z.string(),
    data: z.record(z.string(), z.unknown()),
    created_at: Timestamp,
    seen: z.boolean()
  })
  .meta({ id: 'Notification' })

const Page = z
  .object({
    items: z.array(Notification).meta({ description: 'newest first' }),
    next_cursor: z.string().nullable().meta({ description: 'the cursor of the next (older) page; null at the end of the feed' }),
    seen_up_to: z.string().nullable().meta({ description: 'the seen cursor in effect; null when nothing was marked seen' })
  })
  .meta({ id: 'NotificationPage' })

const SeenBody = z.object({ up_to: z.string().meta({ description: 'the cursor of the newest entry seen' }) }).strict()

/**
 * The account's notification feed (interface "Notifications and statistics"): newest
 * first, by cursor, and the seen mark. Session access tokens only.
 */
export function notificationRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const tags = ['Notifications']

  app.route({
    method: 'GET',
    url: '/api/notifications',
    config: { auth: 'jwt', invalid: 'notifications.invalid_query' },
    schema: {
      operationId: 'listNotifications',
      summary: "The account's notifications, newest first, by cursor",
      tags,
      querystring: FeedQuery,
      response: { 200: Page, ...problems(400, 401) }
    },
    handler: async request => {
      const limit = request.query.limit ?? FEED_DEFAULT_LIMIT
      const { items, seen_up_to: seen, more } = await feed(rt.ctx, principalOf(request).user_uuid, request.query.cursor ?? null, limit)
      return {
        items: items.map(n => ({
          cursor: encodeCursor(n.position),
          kind: n.kind,
          message: n.message,
          data: n.data,
          created_at: n.created_at,
          seen: n.position <= seen
        })),
        next_cursor: more ? encodeCursor(items[items.length - 1].position) : null,
        seen_up_to: seen > 0 ? encodeCursor(seen) : null
      }
    }
  })

  app.route({
    method: 'POST',
    url: '/api/notifications/seen',
    config: { auth: 'jwt', invalid: 'notifications_seen.invalid_request' },
    schema: {
      operationId: 'markNotificationsSeen',
      summary: 'Mark the feed seen up to an entry (the mark never moves back)',
      tags,
      body: SeenBody,
      response: { 200: z.object({ seen_up_to: z.string().meta({ description: 'the seen cursor now in effect' }) }), ...problems(...BODY_PROBLEMS, 401) }
    },
    handler: async request => {
      const owner = principalOf(request).user_uuid
      const position = decodeCursor(request.body.up_to)
      if (position === null) throw new HttpProblem(400, 'notifications_seen.invalid_cursor', 'malformed cursor: pass a cursor this API returned')
      if (!(await feedEntryAt(rt.ctx, owner, position)))
        throw new HttpProblem(400, 'notifications_seen.unknown_cursor', "the cursor names no entry of this account's feed")
      const r = await markNotificationsSeen(rt.ctx, owner, position)
      // Read your writes: the feed read next shows the mark.
      await rt.caughtUp(request, r.position)
      return { seen_up_to: encodeCursor(r.seen_up_to) }
    }
  })
}
