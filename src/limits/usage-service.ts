import { billingPeriodAt } from './billing-period.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import type { AccountSearch, SearchKind } from '../domain/search.ts';

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

/** One page of the account's searches, newest first. */
export interface SearchHistoryPage {
  searches: AccountSearch[];
  hasMore: boolean;
}

/**
 * The one definition of "usage", shared by the usage endpoint, the search response headers and
 * the customer's account pages, and the account's searches behind it.
 */
export class UsageService {
  constructor(private readonly repos: Repositories) {}

  async forAccount(accountId: string, now = new Date()): Promise<Usage | null> {
    const subscription = await this.repos.subscriptions.findActive(accountId, now);
    if (!subscription) return null;
    const plan = await this.repos.plans.findByCode(subscription.planCode);
    if (!plan) throw new Error(`subscription ${subscription.id} names unknown plan ${subscription.planCode}`);
    const period = billingPeriodAt(new Date(subscription.startedAt), now);
    const used = await this.repos.usageCounters.usedInPeriod(accountId, period.start.toISOString());
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

  /** The account's searches, newest first, `limit` at a time; `before` is the last search of the previous page. */
  historyPage(accountId: string, page: { limit: number; before?: { createdAt: string; id: string } }): Promise<SearchHistoryPage> {
    return this.repos.searches.pageForAccount(accountId, page);
  }

  /** Searches per UTC day (YYYY-MM-DD) in the usage's billing period; days without searches are absent. */
  dailyCounts(accountId: string, usage: Pick<Usage, 'periodStart' | 'resetsAt'>): Promise<{ day: string; count: number }[]> {
    return this.repos.searches.dailyCounts(accountId, usage.periodStart.toISOString(), usage.resetsAt.toISOString());
  }

  /** Counted calls per kind (search, lot, catalogue, market, history) in the usage's billing period; kinds without calls are absent. */
  countsByKind(accountId: string, usage: Pick<Usage, 'periodStart' | 'resetsAt'>): Promise<{ kind: SearchKind; count: number }[]> {
    return this.repos.searches.countsByKind(accountId, usage.periodStart.toISOString(), usage.resetsAt.toISOString());
  }
}
