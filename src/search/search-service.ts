import { billingPeriodAt } from '../limits/billing-period.ts';
import type { Lot } from '../domain/lot.ts';
import { checkVin } from '../domain/vin.ts';
import { ApiError, validationError } from '../errors.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import type { CommittedSearch } from '../storage/repositories/searches-repository.ts';
import type { ActivePrincipal } from '../domain/principal.ts';
import { limitHeaders } from '../limits/limit-headers.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { RateLimiter } from '../limits/rate/rate-limiter.ts';

export interface Report {
  status: 'success';
  vin: string;
  origin_timestamp: string;
  lots: Lot[];
  report_url: string;
}

export interface SearchResult {
  report: Report;
  headers: Record<string, string>;
}

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

  reportUrl(reportId: string): string {
    return `${this.options.publicBaseUrl}/report/${reportId}`;
  }

  async search(principal: ActivePrincipal, rawVin: unknown, rawIdempotencyKey: string | undefined): Promise<SearchResult> {
    if (typeof rawVin !== 'string') throw validationError('vin', ['The vin field is required.']);
    const vinCheck = checkVin(rawVin);
    if (!vinCheck.ok) throw validationError('vin', vinCheck.errors);
    const vin = vinCheck.vin;
    const idempotencyKey = rawIdempotencyKey === undefined ? null : rawIdempotencyKey.trim();
    if (idempotencyKey !== null && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw validationError('Idempotency-Key', [
        'The Idempotency-Key header must be 1 to 255 visible ASCII characters.',
      ]);
    }

    const { repos, rateLimiter } = this.options;
    const { subscription } = principal;
    const rate = await rateLimiter.consume(principal.accountId, subscription.ratePerSecond);
    const now = this.now();
    const period = billingPeriodAt(new Date(subscription.startedAt), now);
    const periodStart = period.start.toISOString();
    const quotaOf = (used: number) => ({
      limit: subscription.monthlyQuota,
      used,
      periodStart: period.start,
      periodEnd: period.end,
    });

    if (!rate.allowed) {
      const used = await repos.searches.usedInPeriod(principal.accountId, periodStart);
      const headers = limitHeaders({ rate, quota: quotaOf(used), now });
      throw new ApiError(
        'RATE_LIMITED',
        `Rate limit exceeded: your plan allows ${rate.limit} searches per second. Retry after the Retry-After delay.`,
        { headers: { ...headers, 'retry-after': String(Math.max(1, Math.ceil(rate.resetMs / 1000))) } },
      );
    }

    const lots = await repos.lots.findByVin(vin);
    const result = await repos.searches.commit({
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

    if (result.kind === 'idempotency_conflict') {
      throw validationError('Idempotency-Key', [
        `This Idempotency-Key was used for VIN ${result.originalVin} in the last 24 hours; use a new key for another VIN.`,
      ]);
    }
    const headers = limitHeaders({ rate, quota: quotaOf(result.used), now });
    if (result.kind === 'quota_exceeded') {
      this.options.metrics.quotaRejections.inc();
      const retryAfter = Math.max(1, Math.ceil((period.end.getTime() - now.getTime()) / 1000));
      throw new ApiError(
        'QUOTA_EXCEEDED',
        `Monthly quota exceeded: your plan includes ${subscription.monthlyQuota} searches per billing period, which resets at ${period.end.toISOString()}.`,
        { headers: { ...headers, 'retry-after': String(retryAfter) } },
      );
    }
    if (result.kind === 'replayed') headers['idempotent-replayed'] = 'true';
    this.options.metrics.searches.inc({
      outcome: result.kind === 'replayed' ? 'replayed' : result.search.reportId !== null ? 'found' : 'not_found',
    });
    return this.respond(result.search, headers);
  }

  private respond(search: CommittedSearch, headers: Record<string, string>): SearchResult {
    if (search.reportId === null) {
      throw new ApiError('NO_RECORDS', `No auction records were found for VIN ${search.vin}.`, { headers });
    }
    return {
      headers,
      report: {
        status: 'success',
        vin: search.vin,
        origin_timestamp: search.createdAt,
        lots: search.lots,
        report_url: this.reportUrl(search.reportId),
      },
    };
  }

  /** last_used_at is for the customer's token list; minute precision is plenty and saves a write per search. */
  private touchToken(principal: ActivePrincipal, now: Date): void {
    if (principal.lastUsedAt !== null && now.getTime() - Date.parse(principal.lastUsedAt) < TOUCH_INTERVAL_MS) return;
    this.options.repos.tokens.touch(principal.tokenId, now).catch((error) => this.options.onBackgroundError?.(error));
  }
}
