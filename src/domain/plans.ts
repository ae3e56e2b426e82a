import { z } from 'zod'
import { CHECK_NAMES, type CheckName } from './checks.ts'
import { SCOPES, type Scope } from './api-key/scopes.ts'

/** Billing cycles a paid plan is sold in. */
export const CYCLES = ['monthly', 'yearly'] as const
export type Cycle = (typeof CYCLES)[number]

/** A price of a plan for one cycle: cents of the catalogue's currency, and Stripe's price id (null: not sold through Stripe). */
interface Price {
  cents: number
  stripe_price: string | null
}

/** A subscription plan (docs/interface.md §8, "Plan-driven limits"): its tokens and the caps it puts on an account. */
export interface Plan {
  code: string
  name: string
  /** Tokens granted per month of the plan (a yearly invoice grants twelve months' worth; Free: on confirmation). */
  tokens_per_month: number
  prices: Readonly<Record<Cycle, Price>>
  max_api_keys: number
  max_agents: number
  max_webhooks: number
  /** Unique valid addresses per batch, cumulative across chunks. */
  max_batch_size: number
  /** Addresses per request of a batch chunk. */
  max_chunk_size: number
  /** Requests per minute of each API key and agent token (seeded into keys, realigned when the plan changes). */
  rate_limit_per_minute: number
  /** MiB of list files an account may keep at once, test batches' included (`kept_files_mib`; default: 16 files of the plan's largest). */
  kept_files_mib: number
  allowed_checks: readonly CheckName[]
  /** Scopes an agent may be granted (docs/interface.md §5: refused at agent creation with 403). */
  allowed_scopes: readonly Scope[]
}

/** A top-up pack: `quantity` is how checkout names it (`top_up_quantity`), `tokens` what it grants. */
interface TopUpPack {
  quantity: number
  tokens: number
  cents: number
  stripe_price: string | null
}

/** The plan grid and top-up pricing (`config/plans.json`, or `PLANS_FILE`). */
export interface PlanCatalogue {
  currency: string
  plans: readonly Plan[]
  top_up: readonly TopUpPack[]
}

/** The plan of an account that never subscribed, or whose subscription ended. */
export const FREE = 'free'

const count = z.number().int().min(0).max(1_000_000_000)
const PriceSchema = z.object({ cents: count, stripe_price: z.string().min(1).nullable() }).strict()
const PlanSchema = z
  .object({
    code: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/),
    name: z.string().min(1).max(64),
    tokens_per_month: count,
    prices: z.object({ monthly: PriceSchema, yearly: PriceSchema }).strict(),
    max_api_keys: count,
    max_agents: count,
    max_webhooks: count,
    max_batch_size: count.min(1),
    max_chunk_size: count.min(1),
    rate_limit_per_minute: count.min(1),
    kept_files_mib: count.optional(),
    allowed_checks: z.array(z.enum(CHECK_NAMES)).min(1),
    allowed_scopes: z.array(z.enum(SCOPES))
  })
  .strict()
const CatalogueSchema = z
  .object({
    currency: z.string().regex(/^[a-z]{3}$/),
    plans: z.array(PlanSchema).min(1),
    top_up: z.array(z.object({ quantity: count.min(1), tokens: count.min(1), cents: count.min(1), stripe_price: z.string().min(1).nullable() }).strict())
  })
  .strict()
  .superRefine((c, issue) => {
    if (!c.plans.some(p => p.code === FREE)) issue.addIssue({ code: 'custom', message: `a plan with code "${FREE}" is required`, path: ['plans'] })
    if (new Set(c.plans.map(p => p.code)).size !== c.plans.length) issue.addIssue({ code: 'custom', message: 'plan codes must be unique', path: ['plans'] })
    if (new Set(c.top_up.map(p => p.quantity)).size !== c.top_up.length)
      issue.addIssue({ code: 'custom', message: 'top-up quantities must be unique', path: ['top_up'] })
  })

/**
 * Checks a plan catalogue as read from its JSON file (`source` names it in errors). Checks
 * are kept in the engine's order, scopes in the interface's, top-up packs by quantity.
 * @throws Error naming the source and every invalid field (the process should exit with it).
 */
export function parsePlanCatalogue(raw: unknown, source: string): PlanCatalogue {
  const parsed = CatalogueSchema.safeParse(raw)
  if (!parsed.success) throw new Error(`plans file ${source}: ${parsed.error.issues.map(i => `${i.path.join('.')}: ${i.message}`).join('; ')}`)
  const c = parsed.data
  return {
    currency: c.currency,
    plans: c.plans.map(p => ({
      ...p,
      kept_files_mib: p.kept_files_mib ?? Math.ceil((16 * keptFileMaxBytes(p)) / MiB),
      allowed_checks: CHECK_NAMES.filter(n => p.allowed_checks.includes(n)),
      allowed_scopes: SCOPES.filter(s => p.allowed_scopes.includes(s))
    })),
    top_up: [...c.top_up].sort((a, b) => a.quantity - b.quantity)
  }
}

const MiB = 1024 * 1024

/** Bytes a kept file may hold per address the plan allows in a batch (a row of a wide CRM export), and at least. */
const KEPT_BYTES_PER_ROW = 2_048
const KEPT_FILE_MIN_BYTES = 4 * MiB

/** Bytes one kept list file may hold on `plan`: 2 KiB per address of its batch size, at least 4 MiB. */
export function keptFileMaxBytes(plan: Pick<Plan, 'max_batch_size'>): number {
  return Math.max(KEPT_FILE_MIN_BYTES, plan.max_batch_size * KEPT_BYTES_PER_ROW)
}

/** Bytes of list files an account on `plan` may keep at once (its `kept_files_mib`). */
export function keptFilesQuotaBytes(plan: Pick<Plan, 'kept_files_mib'>): number {
  return plan.kept_files_mib * MiB
}

/** The plan `code` of the catalogue, or null. */
export function findPlan(catalogue: PlanCatalogue, code: string): Plan | null {
  return catalogue.plans.find(p => p.code === code) ?? null
}

/** The Free plan of the catalogue (always present: the loader checks it). */
export function freePlan(catalogue: PlanCatalogue): Plan {
  return findPlan(catalogue, FREE)!
}

/**
 * The plan an account is on: its subscription's plan, or Free when it has none or the
 * plan left the catalogue (an operator removed it: the account keeps Free's caps).
 */
export function planFor(catalogue: PlanCatalogue, code: string | null | undefined): Plan {
  return (code ? findPlan(catalogue, code) : null) ?? freePlan(catalogue)
}

/** Tokens an invoice of `plan` for one `cycle` grants. */
export function tokensPerInvoice(plan: Plan, cycle: Cycle): number {
  return plan.tokens_per_month * (cycle === 'yearly' ? 12 : 1)
}
