import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { balancesAt, getWallet, listLedger, TRANSACTION_SORTS } from '../../projections/wallets.ts'
import { principalOf } from '../plugins/auth.ts'
import { HttpProblem } from '../problem.ts'
import { PageQuery, Paginated, Timestamp, problems } from '../schemas.ts'
import { BucketQuery, bucketsOfQuery } from './buckets.ts'
import type { HttpRuntime } from '../runtime.ts'

/** The wallet (docs/interface.md §2: credit balance). Tokens. */
const Wallet = z
  .object({
    balance: z.number().meta({ description: 'tokens available to reserve' }),
    reserved: z.number().meta({ description: 'tokens held by jobs in flight' }),
    spent: z.number().meta({ description: 'tokens ever charged' }),
    granted: z.number().meta({ description: 'tokens ever granted' }),
    unit: z.literal('tokens'),
    updated_at: Timestamp.nullable()
  })
  .meta({ id: 'Wallet', examples: [{ balance: 990, reserved: 10, spent: 0, granted: 1000, unit: 'tokens', updated_at: '2026-11-23T10:00:00.000Z' }] })

const TransactionType = z.enum(['grant', 'reservation', 'capture', 'release'])

/** One entry of the ledger (docs/interface.md §2: occurred_at, amount, transaction_type). */
const Transaction = z
  .object({
    uuid: z.string().meta({ description: 'the wallet event' }),
    occurred_at: Timestamp,
    amount: z.number().meta({ description: 'signed change of the available balance, tokens (a capture moves no available tokens: they were held)' }),
    tokens: z.number().meta({ description: 'tokens the entry moved' }),
    transaction_type: TransactionType,
    job_uuid: z.string().nullable(),
    reason: z.string().nullable(),
    balance_after: z.number()
  })
  .meta({ id: 'WalletTransaction' })

const Group = z
  .object({
    job_uuid: z.string().nullable().meta({ description: 'the verification job; null for a grant' }),
    occurred_at: Timestamp.meta({ description: 'when the group began' }),
    last_at: Timestamp,
    amount: z.number().meta({ description: 'net change of the available balance' }),
    transaction_type: TransactionType.meta({ description: 'the type of its first entry' }),
    transactions: z.array(
      z.object({
        uuid: z.string(),
        occurred_at: Timestamp,
        amount: z.number(),
        tokens: z.number(),
        transaction_type: TransactionType,
        reason: z.string().nullable()
      })
    )
  })
  .meta({ id: 'WalletTransactionGroup' })

const TransactionsQuery = PageQuery.extend({
  sort: z
    .enum(TRANSACTION_SORTS, { message: `unknown sort; one of: ${TRANSACTION_SORTS.join(', ')}` })
    .optional()
    .meta({ description: 'default occurred_at' }),
  order: z.enum(['asc', 'desc'], { message: 'unknown order; asc or desc' }).optional().meta({ description: 'default desc' })
})

/**
 * The wallet holds live tokens only (a test key never reserves from it): a `svc_test_…`
 * key reading it is refused, whatever else it asks (issue 42 item 10). A route `onRequest`
 * hook, after the credential is authenticated and before the query is read.
 * @throws HttpProblem 403 `wallet.live_only` for a test key.
 */
async function liveOnly(request: FastifyRequest): Promise<void> {
  if (principalOf(request).environment === 'test')
    throw new HttpProblem(
      403,
      'wallet.live_only',
      'the wallet holds live tokens, which a test key never spends: read it with a live key, an agent or in the console'
    )
}

/**
 * The wallet reads (interface "Billing, wallet, subscription, config"). Auth A,
 * `billing:read`; live credentials and sessions only (`liveOnly`).
 */
export function walletRoutes(fastify: FastifyInstance, rt: HttpRuntime): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>()
  const tags = ['Wallet']
  const guard = { auth: 'any', scope: 'billing:read' } as const

  app.route({
    method: 'GET',
    url: '/api/wallet',
    config: guard,
    onRequest: liveOnly,
    schema: {
      operationId: 'getWallet',
      summary: 'The current credit balance (live tokens: a test key is refused)',
      tags,
      response: { 200: Wallet, ...problems(401, 403) }
    },
    handler: async request => {
      const w = await getWallet(rt.ctx, principalOf(request).user_uuid)
      return {
        balance: w?.balance ?? 0,
        reserved: w?.reserved ?? 0,
        spent: w?.spent ?? 0,
        granted: w?.granted ?? 0,
        unit: 'tokens' as const,
        updated_at: w?.updated_at ?? null
      }
    }
  })

  app.route({
    method: 'GET',
    url: '/api/wallet/balance-history',
    config: { ...guard, invalid: 'balance_history.invalid_query' },
    onRequest: liveOnly,
    schema: {
      operationId: 'getBalanceHistory',
      summary: 'The available balance at the end of each bucket: zero-filled, oldest first',
      tags,
      querystring: BucketQuery,
      response: {
        200: z.object({
          granularity: z.string(),
          days: z.number(),
          time_zone: z.string(),
          series: z.array(z.object({ start: Timestamp, end: Timestamp, balance: z.number() }))
        }),
        ...problems(400, 401, 403)
      }
    },
    handler: async request => {
      const { buckets, granularity, days, tz } = bucketsOfQuery(request.query, rt.ctx.now())
      const balances = await balancesAt(
        rt.ctx,
        principalOf(request).user_uuid,
        buckets.map(b => b.end)
      )
      return { granularity, days, time_zone: tz, series: buckets.map((b, i) => ({ ...b, balance: balances[i] })) }
    }
  })

  app.route({
    method: 'GET',
    url: '/api/wallet/transactions',
    config: { ...guard, invalid: 'list_transactions.invalid_query' },
    onRequest: liveOnly,
    schema: {
      operationId: 'listWalletTransactions',
      summary: 'The ledger, sorted, paged (newest first by default)',
      tags,
      querystring: TransactionsQuery,
      response: { 200: Paginated(Transaction), ...problems(400, 401, 403) }
    },
    handler: async request => {
      const q = request.query
      const { items, total } = await listLedger(rt.ctx, 'transactions', principalOf(request).user_uuid, q.sort ?? 'occurred_at', q.order === 'asc' ? 1 : -1, {
        limit: q.limit,
        offset: q.offset
      })
      return { items: items.map(({ _id, user_uuid: _, seq: __, ...t }) => ({ uuid: _id, ...t })), total, limit: q.limit, offset: q.offset }
    }
  })

  app.route({
    method: 'GET',
    url: '/api/wallet/transactions/grouped',
    config: { ...guard, invalid: 'list_transactions.invalid_query' },
    onRequest: liveOnly,
    schema: {
      operationId: 'listWalletTransactionGroups',
      summary: 'The ledger grouped by verification job, newest group first by default',
      tags,
      querystring: TransactionsQuery,
      response: { 200: Paginated(Group), ...problems(400, 401, 403) }
    },
    handler: async request => {
      const q = request.query
      const { items, total } = await listLedger(rt.ctx, 'groups', principalOf(request).user_uuid, q.sort ?? 'occurred_at', q.order === 'asc' ? 1 : -1, {
        limit: q.limit,
        offset: q.offset
      })
      return {
        items: items.map(g => ({
          job_uuid: g.job_uuid,
          occurred_at: g.occurred_at,
          last_at: g.last_at,
          amount: g.amount,
          transaction_type: g.transaction_type,
          transactions: g.transactions.map(({ _id, ...t }) => ({ uuid: _id, ...t }))
        })),
        total,
        limit: q.limit,
        offset: q.offset
      }
    }
  })
}
