import type { LimitsSnapshot } from '../limits/limit-headers.ts';
import type { LotRef } from '../domain/lot-ref.ts';

/**
 * The words of a search's refusals, in one place: the API's answer (http/api/v1/search-answer.ts)
 * and a batch item's message (batches/item-result.ts) say the same.
 */
export function notFoundMessage(vin: string, lot: LotRef | null): string {
  return lot ? `No lot ${lot.lotId} is known at ${lot.auction}.` : `No auction records were found for VIN ${vin}.`;
}

export function rateLimitedMessage(limits: LimitsSnapshot): string {
  return `Rate limit exceeded: your plan allows ${limits.rate.limit} searches per second. Retry after the Retry-After delay.`;
}

export function quotaExceededMessage(limits: LimitsSnapshot): string {
  return `Monthly quota exceeded: your plan includes ${limits.quota.limit} searches per billing period, which resets at ${limits.quota.periodEnd.toISOString()}.`;
}

export function idempotencyConflictMessage(original: string): string {
  return `This Idempotency-Key was used for ${original} in the last 24 hours; use a new key for another search.`;
}
