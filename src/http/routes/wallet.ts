import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type { WalletDoc } from '../../projections/wallets.ts'
import { principalOf } from '../plugins/auth.ts'
import { Timestamp, problems } from '../schemas.ts'
import type { HttpRuntime } from '../runtime.ts'

/** The wallet (interface section 2: credit balance). Tokens. */
export const Wallet = z.object({
  balance: z.number().meta({ description: 'tokens available to reserve' }),
  reserved: z.number().meta({ description: 'tokens held by jobs in flight' }),
  spent: z.number().meta({ description: 'tokens ever charged' }),
  granted: z.number().meta({ description: 'tokens ever granted' }),
  unit: z.literal('tokens'),
  updated_at: Timestamp.nullable()
}).meta({ id: 'Wallet', examples: [{ balance: 990, reserved: 10, spent: 0, granted: 1000, unit: 'tokens', updated_at: '2026-11-23T10:00:00.000Z' }] })

/** GET /api/wallet (auth A, `billing:read`): the account's token balance. */
export function walletRoutes (fastify: FastifyInstance, rt: HttpRuntime): void {
  fastify.withTypeProvider<ZodTypeProvider>().route({
    method: 'GET',
    url: '/api/wallet',
    config: { auth: 'any', scope: 'billing:read' },
    schema: { operationId: 'getWallet', summary: 'The current credit balance', tags: ['Wallet'], response: { 200: Wallet, ...problems(401, 403) } },
    handler: async request => {
      const w = await rt.ctx.reads.collection<WalletDoc>('wallets').get(principalOf(request).user_uuid)
      return { balance: w?.balance ?? 0, reserved: w?.reserved ?? 0, spent: w?.spent ?? 0, granted: w?.granted ?? 0, unit: 'tokens' as const, updated_at: w?.updated_at ?? null }
    }
  })
}
