import { billingPeriodAt } from './billing-period.ts';
import type { Repositories } from '../storage/repositories/index.ts';

/** An account's limits and use in the billing period that contains `now`. */
export interface Usage {
  plan: { code: string; name: string };
  billing: 'monthly' | 'annual';
  ratePerSecond: number;
  quota: number;
  used: number;
  remaining: number;
  periodStart: Date;
  /** When the quota resets: the end of the current period. */
  resetsAt: Date;
}

/**
 * The one definition of "usage", shared by the usage endpoint, the search response headers and
 * the customer's account pages.
 */
export class UsageService {
  constructor(private readonly repos: Repositories) {}

  async forAccount(accountId: string, now = new Date()): Promise<Usage | null> {
    const subscription = await this.repos.subscriptions.findActive(accountId, now);
    if (!subscription) return null;
    const plan = await this.repos.plans.findByCode(subscription.planCode);
    if (!plan) throw new Error(`subscription ${subscription.id} names unknown plan ${subscription.planCode}`);
    const period = billingPeriodAt(new Date(subscription.startedAt), now);
    const used = await this.repos.searches.usedInPeriod(accountId, period.start.toISOString());
    return {
      plan: { code: plan.code, name: plan.name },
      billing: subscription.billing,
      ratePerSecond: plan.ratePerSecond,
      quota: plan.monthlyQuota,
      used,
      remaining: Math.max(0, plan.monthlyQuota - used),
      periodStart: period.start,
      resetsAt: period.end,
    };
  }
}
