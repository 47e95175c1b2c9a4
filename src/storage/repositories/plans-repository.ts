import type { Db } from '../database.ts';
import type { PlanRow } from '../schema.ts';

export interface NewPlan {
  code: string;
  name: string;
  monthlyQuota: number;
  ratePerSecond: number;
  monthlyPriceCents: number;
  /** Defaults to 12 x the monthly price (no discount), the rule for custom plans. */
  annualPriceCents?: number;
}

export class PlansRepository {
  constructor(private readonly db: Db) {}

  async create(plan: NewPlan, now = new Date()): Promise<PlanRow> {
    const row: PlanRow = {
      code: plan.code,
      name: plan.name,
      monthly_quota: plan.monthlyQuota,
      rate_per_second: plan.ratePerSecond,
      monthly_price_cents: plan.monthlyPriceCents,
      annual_price_cents: plan.annualPriceCents ?? plan.monthlyPriceCents * 12,
      is_public: 0,
      is_favourite: 0,
      created_at: now.toISOString(),
    };
    await this.db.kysely.insertInto('plans').values(row).execute();
    return row;
  }

  async findByCode(code: string): Promise<PlanRow | undefined> {
    return this.db.kysely.selectFrom('plans').selectAll().where('code', '=', code).executeTakeFirst();
  }

  /** Public plans first, by price; then custom plans, by price. */
  async list(): Promise<PlanRow[]> {
    return this.db.kysely
      .selectFrom('plans')
      .selectAll()
      .orderBy('is_public', 'desc')
      .orderBy('monthly_price_cents')
      .orderBy('code')
      .execute();
  }
}
