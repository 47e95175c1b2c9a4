import { billingPeriodAt } from '../limits/billing-period.ts';
import type { LimitsSnapshot } from '../limits/limit-headers.ts';
import type { RateLimiter } from '../limits/rate/rate-limiter.ts';
import type { Lot } from '../domain/lot.ts';
import type { ActivePrincipal } from '../domain/principal.ts';
import type { Report } from '../domain/report.ts';
import { checkVin } from '../domain/vin.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import type { Metrics } from '../observability/metrics.ts';

/**
 * What a search answers. Every outcome past the rate check carries the account's limits as they
 * stand after it; the rate check's own refusal carries them too, uncounted.
 */
export type SearchOutcome =
  | { kind: 'found'; report: Report; replayed: boolean; limits: LimitsSnapshot }
  | { kind: 'not_found'; vin: string; replayed: boolean; limits: LimitsSnapshot }
  | { kind: 'rate_limited'; limits: LimitsSnapshot }
  | { kind: 'quota_exceeded'; limits: LimitsSnapshot }
  | { kind: 'idempotency_conflict'; originalVin: string }
  | { kind: 'invalid_input'; field: 'vin' | 'Idempotency-Key'; messages: string[] };

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
const TOUCH_INTERVAL_MS = 60_000;

export interface SearchServiceOptions {
  repos: Repositories;
  rateLimiter: RateLimiter;
  metrics: Metrics;
  publicBaseUrl: string;
  now?: () => Date;
  /** Called when a background write (last-used time) fails; it must not fail the search. */
  onBackgroundError?: (error: unknown) => void;
  /**
   * The photo archive's step: each lot's image URLs, in order, with archived ones replaced by
   * their copies' URLs (media/media-service.ts). Without it the lots keep their stored URLs.
   */
  resolveImages?: (lots: Lot[]) => Promise<Lot[]>;
}

/**
 * One search, in the contract's order: (authentication and subscription are checked before this
 * is called) VIN validation, per-second rate, monthly quota, lookup. The quota is counted in the
 * same transaction as the search record and the report.
 */
export class SearchService {
  private readonly now: () => Date;

  constructor(private readonly options: SearchServiceOptions) {
    this.now = options.now ?? (() => new Date());
  }

  async search(principal: ActivePrincipal, rawVin: string, rawIdempotencyKey: string | undefined): Promise<SearchOutcome> {
    const vinCheck = checkVin(rawVin);
    if (!vinCheck.ok) return { kind: 'invalid_input', field: 'vin', messages: vinCheck.errors };
    const vin = vinCheck.vin;
    const idempotencyKey = rawIdempotencyKey === undefined ? null : rawIdempotencyKey.trim();
    if (idempotencyKey !== null && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      return {
        kind: 'invalid_input',
        field: 'Idempotency-Key',
        messages: ['The Idempotency-Key header must be 1 to 255 visible ASCII characters.'],
      };
    }

    const { repos, rateLimiter } = this.options;
    const { subscription } = principal;
    const rate = await rateLimiter.consume(principal.accountId, subscription.ratePerSecond);
    const now = this.now();
    const period = billingPeriodAt(new Date(subscription.startedAt), now);
    const periodStart = period.start.toISOString();
    const limitsAt = (used: number): LimitsSnapshot => ({
      rate,
      quota: { limit: subscription.monthlyQuota, used, periodStart: period.start, periodEnd: period.end },
      now,
    });

    if (!rate.allowed) {
      return { kind: 'rate_limited', limits: limitsAt(await repos.usageCounters.usedInPeriod(principal.accountId, periodStart)) };
    }

    const stored = await repos.lots.findByVin(vin);
    const lots = this.options.resolveImages && stored.length > 0 ? await this.options.resolveImages(stored) : stored;
    const result = await repos.searchCommit.commit({
      accountId: principal.accountId,
      tokenId: principal.tokenId,
      vin,
      now,
      periodStart,
      quota: subscription.monthlyQuota,
      lots,
      idempotencyKey,
    });
    this.touchToken(principal, now);

    if (result.kind === 'idempotency_conflict') return result;
    const limits = limitsAt(result.used);
    if (result.kind === 'quota_exceeded') {
      this.options.metrics.quotaRejections.inc();
      return { kind: 'quota_exceeded', limits };
    }
    const replayed = result.kind === 'replayed';
    const { search } = result;
    this.options.metrics.searches.inc({ outcome: replayed ? 'replayed' : search.reportId !== null ? 'found' : 'not_found' });
    if (search.reportId === null) return { kind: 'not_found', vin: search.vin, replayed, limits };
    return {
      kind: 'found',
      replayed,
      limits,
      report: {
        status: 'success',
        vin: search.vin,
        origin_timestamp: search.createdAt,
        lots: search.lots,
        report_url: `${this.options.publicBaseUrl}/report/${search.reportId}`,
      },
    };
  }

  /** Idempotency keys answer for 24 hours; the hourly sweep drops the older ones. */
  deleteExpiredIdempotencyKeys(now = this.now()): Promise<number> {
    return this.options.repos.idempotencyKeys.deleteExpired(now);
  }

  /** last_used_at is for the customer's token list; minute precision is plenty and saves a write per search. */
  private touchToken(principal: ActivePrincipal, now: Date): void {
    if (principal.lastUsedAt !== null && now.getTime() - Date.parse(principal.lastUsedAt) < TOUCH_INTERVAL_MS) return;
    this.options.repos.tokens.touch(principal.tokenId, now).catch((error) => this.options.onBackgroundError?.(error));
  }
}
