import type { NewPlan, Plan } from '../domain/plan.ts';
import type { Db } from '../storage/database.ts';
import type { Repositories } from '../storage/repositories/index.ts';

export type CreatePlanOutcome = { kind: 'created'; plan: Plan } | { kind: 'code-taken' };

/** The plans: the public price list and the operator's custom (enterprise) plans. */
export class PlanService {
  constructor(private readonly options: { db: Db; repos: Repositories }) {}

  /** Public plans first, by price; then custom plans, by price. */
  list(): Promise<Plan[]> {
    return this.options.repos.plans.list();
  }

  findByCode(code: string): Promise<Plan | undefined> {
    return this.options.repos.plans.findByCode(code);
  }

  /** A custom plan, off the public price list. */
  async create(plan: NewPlan, now = new Date()): Promise<CreatePlanOutcome> {
    if (await this.findByCode(plan.code)) return { kind: 'code-taken' };
    try {
      return { kind: 'created', plan: await this.options.repos.plans.create(plan, now) };
    } catch (error) {
      // Another process created the same code between the check and the insert.
      if (this.options.db.isUniqueViolation(error)) return { kind: 'code-taken' };
      throw error;
    }
  }
}
