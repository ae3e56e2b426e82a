import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_PLANS_FILE } from '../../src/config.ts'

type PlanPatch = Record<string, Record<string, unknown>>

/**
 * A plan catalogue for a test: the shipped `config/plans.json` with `patch` applied per
 * plan code, written into `dir`; its path for `PLANS_FILE`.
 */
export function plansFile(dir: string, patch: PlanPatch, name = 'plans.json'): string {
  const catalogue = JSON.parse(readFileSync(DEFAULT_PLANS_FILE, 'utf8')) as { plans: Array<Record<string, unknown> & { code: string }> }
  for (const plan of catalogue.plans) Object.assign(plan, patch[plan.code] ?? {})
  const file = join(dir, name)
  writeFileSync(file, JSON.stringify(catalogue, null, 2))
  return file
}

/**
 * For tests about something else than rate limits that send many requests with one key
 * (contention, engine runs): the shipped plans with rate limits no test reaches.
 */
export function unlimitedRates(dir: string): { PLANS_FILE: string } {
  const patch: PlanPatch = {}
  for (const code of ['free', 'starter', 'pro', 'business']) patch[code] = { rate_limit_per_minute: 1_000_000_000 }
  return { PLANS_FILE: plansFile(dir, patch, 'plans-unlimited-rates.json') }
}
