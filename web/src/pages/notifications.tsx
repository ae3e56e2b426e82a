import { useState, type ReactNode } from 'react'
import { Button } from 'react-aria-components'
import { api } from '../api.ts'
import { useI18n } from '../i18n.tsx'
import { ApiCall, PageTitle, ProblemAlert } from '../ui.tsx'
import { useGet } from '../queries.ts'

/** The account's feed, newest first, paged by cursor; "mark as read" moves the seen cursor to the newest entry. */
export default function Notifications(): ReactNode {
  const { t, formatDate } = useI18n()
  const [cursor, setCursor] = useState<string | null>(null)
  const feed = useGet('/api/notifications', { params: { query: { limit: 24, ...(cursor && { cursor }) } } })
  const items = feed.data?.items ?? []
  const markRead = async (): Promise<void> => {
    if (items.length === 0) return
    await api.POST('/api/notifications/seen', { body: { up_to: items[0].cursor } })
    feed.reload()
  }
  return (
    <>
      <PageTitle>{t('nav.notifications')}</PageTitle>
      <ProblemAlert problem={feed.failure?.problem ?? null} />
      <section className="card" aria-labelledby="feed-h">
        <h2 id="feed-h">{t('notifications.feed')}</h2>
        <Button
          onPress={() => {
            void markRead()
          }}
          isDisabled={!items.some(n => !n.seen)}
        >
          {t('notifications.markRead')}
        </Button>
        {items.length === 0 ? (
          <p className="muted">{t('notifications.none')}</p>
        ) : (
          <ul>
            {items.map(n => (
              <li key={n.cursor} data-unread={!n.seen}>
                {!n.seen && <strong>{t('notifications.new')} </strong>}
                {t(`notice.${n.kind}`, Object.fromEntries(Object.entries(n.data).map(([k, v]) => [k, String(v)])))}{' '}
                <span className="muted">{formatDate(Date.parse(n.created_at), { dateStyle: 'short', timeStyle: 'short' })}</span>
              </li>
            ))}
          </ul>
        )}
        {feed.data?.next_cursor && (
          <Button
            className="react-aria-Button secondary"
            onPress={() => {
              setCursor(feed.data!.next_cursor)
            }}
          >
            {t('notifications.older')}
          </Button>
        )}
        <ApiCall method="POST" path="/api/notifications/seen" body={{ up_to: items[0]?.cursor ?? '<cursor>' }} />
      </section>
    </>
  )
}
