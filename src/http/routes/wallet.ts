import type { FastifyInstance } from 'fastify'
import type { WalletDoc } from '../../projections/wallets.ts'
import { authenticate, requireScope } from '../plugins/auth.ts'
import type { HttpRuntime } from '../runtime.ts'

/** GET /api/wallet (auth A, `billing:read`): the account's token balance. */
export function walletRoutes (app: FastifyInstance, rt: HttpRuntime): void {
  app.get('/api/wallet', async request => {
    const p = await authenticate(rt.ctx, request, 'any')
    requireScope(p, 'billing:read')
    const w = await rt.ctx.reads.collection<WalletDoc>('wallets').get(p.user_uuid)
    return {
      balance: w?.balance ?? 0,
      reserved: w?.reserved ?? 0,
      spent: w?.spent ?? 0,
      granted: w?.granted ?? 0,
      unit: 'tokens',
      updated_at: w?.updated_at ?? null
    }
  })
}
