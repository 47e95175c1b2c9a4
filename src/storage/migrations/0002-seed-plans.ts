import type { Kysely } from 'kysely';

/** The contract's three plans. Prices in cents; annual = 12 x monthly, less 20 % where the contract says. */
export const CONTRACT_PLANS = [
  { code: 'standard', name: 'Standard', monthly_quota: 1000, rate_per_second: 2, monthly_price_cents: 5000, annual_price_cents: 60000, is_favourite: 1 },
  { code: 'professional', name: 'Professional', monthly_quota: 5000, rate_per_second: 5, monthly_price_cents: 15000, annual_price_cents: 144000, is_favourite: 0 },
  { code: 'vip', name: 'VIP', monthly_quota: 15000, rate_per_second: 10, monthly_price_cents: 40000, annual_price_cents: 384000, is_favourite: 0 },
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  const created_at = new Date().toISOString();
  await db
    .insertInto('plans')
    .values(CONTRACT_PLANS.map((plan) => ({ ...plan, is_public: 1, created_at })))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('plans').where('code', 'in', CONTRACT_PLANS.map((p) => p.code)).execute();
}
