import { DomainError } from '../../domain/shared.ts'
import type { CommandContext } from '../context.ts'
import { openSessions, openSessionsStarted, openSessionsStartedAt } from '../../projections/sessions.ts'
import { revokeSession } from './revoke-session.ts'

/**
 * Revokes every active session of `owner` except `keep` (password change and reset, a
 * change of factors, a ban, an operator). Cost: the account's open sessions.
 * Which sessions are open comes from the `sessions` read model (an account's sessions
 * are many streams: no one stream knows them all). Each revocation is decided on the
 * session's own stream, so one ended a moment ago changes nothing. The read model lags the
 * store by the runner's batch (milliseconds): a session whose start was committed in that
 * instant is not seen, as if it had started just after the revocation.
 * @returns the global position of the last revocation (0 when there was none).
 */
export async function revokeAllSessions(ctx: CommandContext, owner: string, keep: string | null, actor?: string): Promise<number> {
  const items = await openSessions(ctx, owner)
  let position = 0
  for (const s of items) if (s.uuid !== keep) position = Math.max(position, await revokeSession(ctx, s.uuid, 'revoked', undefined, undefined, actor))
  return position
}

/**
 * `svc sessions end --all` (ASVS 5.0 V7.4.5): ends every session open when it starts, page
 * by page (oldest first, keyset on `started_at`), reporting progress. Sessions started
 * after it began are left alone. Cost: the open sessions, PAGE at a time in memory.
 * Pages come from the `sessions` read model (see `revokeAllSessions` for why that is safe).
 * @returns how many sessions it ended.
 */
export async function endAllSessions(ctx: CommandContext, actor: string, onProgress: (ended: number) => void = () => {}): Promise<{ sessions_ended: number }> {
  const PAGE = 500
  const before = ctx.now().toISOString()
  let cursor = ''
  const done = new Set<string>()
  let ended = 0
  const end = async (s: { uuid: string; started_at: string }): Promise<void> => {
    if (s.started_at !== cursor) {
      cursor = s.started_at
      done.clear()
    }
    if (done.has(s.uuid)) return
    await revokeSession(ctx, s.uuid, 'revoked', undefined, undefined, actor).catch(err => {
      if (!(err instanceof DomainError)) throw err
    })
    done.add(s.uuid)
    ended++
  }
  for (;;) {
    // The read model may still show sessions ended a moment ago: those of the cursor's instant are remembered (`done`).
    const page = await openSessionsStarted(ctx, { from: cursor, to: before, limit: PAGE })
    const fresh = page.filter(s => !(s.started_at === cursor && done.has(s.uuid)))
    if (fresh.length === 0 && page.length === PAGE) {
      // A full page of one instant, all ended already: walk that instant's sessions by id.
      let from = ''
      for (;;) {
        const tie = await openSessionsStartedAt(ctx, { at: cursor, id_from: from, limit: PAGE })
        for (const s of tie) await end(s)
        if (tie.length < PAGE) break
        from = tie[tie.length - 1].uuid
      }
      // Then past that instant.
      cursor = `${cursor}\u0000`
      done.clear()
      continue
    }
    if (fresh.length === 0) return { sessions_ended: ended }
    for (const s of fresh) await end(s)
    onProgress(ended)
  }
}
