import { keepPreviousData, QueryClient, useQuery } from '@tanstack/react-query'
import type { FetchResponse, MaybeOptionalInit } from 'openapi-fetch'
import type { paths } from '../../src/client/generated/schema.d.ts'
import { api, onSessionChange } from './api.ts'
import { failureOf, type Failure } from './ui.tsx'

/**
 * The console's reads, through TanStack Query: one query per GET and its parameters (the
 * key is `['GET', path, init]`, so two components that read the same thing share one
 * request). Settings that keep what a page shows true to the service: no retry (a failure
 * is shown at once, with the problem the service answered), no refetch on focus, data
 * always stale (every mount reads again), dropped as soon as no component shows it (a page
 * opened again never shows an earlier answer), and all of it forgotten when the session
 * changes (nothing of one account is left for the next).
 */
export const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: 0, gcTime: 0 } }
})
onSessionChange(() => {
  queryClient.clear()
})

/** The paths the API answers GET on (openapi-fetch's PathsWithMethod, over the generated paths). */
type GetPath = { [P in keyof paths]: paths[P] extends { get: object } ? P : never }[keyof paths]
/** What `GET path` with `init` answers on success. */
type GetData<P extends GetPath, I> = NonNullable<FetchResponse<paths[P]['get'], I, 'application/json'>['data']>

/** What a read gives a page: its data (the previous one while parameters change), the failure to show, a way to read again, whether a read is under way. */
export interface Read<T> {
  data: T | null
  failure: Failure | null
  reload: () => void
  loading: boolean
}

/**
 * `GET path` with `init` (its path and query parameters), read when the page shows it and
 * again when `init` or `also` (what else the page wants it read again for: the batch it
 * opened) changes, or when `reload()` is called.
 */
export function useGet<P extends GetPath, I extends MaybeOptionalInit<paths[P], 'get'>>(path: P, init?: I, also: readonly unknown[] = []): Read<GetData<P, I>> {
  const query = useQuery({
    queryKey: ['GET', path, init ?? null, ...also],
    queryFn: async ({ signal }) => {
      const get = api.GET as (path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>
      const r = await get(path, { ...(init ?? {}), signal })
      if (r.data !== undefined) return r.data as GetData<P, I>
      throw failureOf(r.error, r.response)
    },
    placeholderData: keepPreviousData
  })
  return {
    data: query.data ?? null,
    failure: query.error as Failure | null,
    reload: () => {
      void query.refetch()
    },
    loading: query.isFetching
  }
}
