import type { Db } from '../database.ts';
import type { PlanRow } from '../schema.ts';
import { DEFAULT_WATCH_LIMIT, type NewPlan, type Plan } from '../../domain/plan.ts';

function toPlan(row: PlanRow): Plan {
  return {
    code: row.code,
    name: row.name,
    monthlyQuota: row.monthly_quota,
    ratePerSecond: row.rate_per_second,
    monthlyPriceCents: row.monthly_price_cents,
    annualPriceCents: row.annual_price_cents,
    isPublic: row.is_public === 1,
    isFavourite: row.is_favourite === 1,
    watchLimit: row.watch_limit,
    createdAt: row.created_at,
  };
}


export class PlansRepository {
  constructor(private readonly db: Db) {}

  async create(plan: NewPlan, now = new Date()): Promise<Plan> {
    const row: PlanRow = {
      code: plan.code,
      name: plan.name,
      monthly_quota: plan.monthlyQuota,
      rate_per_second: plan.ratePerSecond,
      monthly_price_cents: plan.monthlyPriceCents,
      annual_price_cents: plan.annualPriceCents ?? plan.monthlyPriceCents * 12,
      is_public: 0,
      is_favourite: 0,
      watch_limit: plan.watchLimit ?? DEFAULT_WATCH_LIMIT,
      created_at: now.toISOString(),
    };
    await this.db.kysely.insertInto('plans').values(row).execute();
    return toPlan(row);
  }

  async findByCode(code: string): Promise<Plan | undefined> {
    const row = await this.db.kysely.selectFrom('plans').selectAll().where('code', '=', code).executeTakeFirst();
    return row && toPlan(row);
  }

  /** Public plans first, by price; then custom plans, by price. */
  async list(): Promise<Plan[]> {
    const rows = await this.db.kysely
      .selectFrom('plans')
      .selectAll()
      .orderBy('is_public', 'desc')
      .orderBy('monthly_price_cents')
      .orderBy('code')
      .execute();
    return rows.map(toPlan);
  }
}
