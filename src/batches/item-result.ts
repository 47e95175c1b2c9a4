import type { BatchItemResult } from '../domain/batch.ts';
import type { SearchOutcome } from '../search/search-service.ts';
import { idempotencyConflictMessage, notFoundMessage, quotaExceededMessage } from '../search/outcome-messages.ts';

/** The 401 body's message, as the contract fixes it. */
export const UNAUTHENTICATED_MESSAGE = 'Unauthenticated.';
export const SUBSCRIPTION_REQUIRED_MESSAGE = 'Your account has no active subscription (expired, cancelled or unpaid). Buy or renew a plan in your personal account to search again.';

/**
 * What an item's search came to, as the contract stores it: the HTTP status the search would have
 * had, the report or the message it would have answered. A per-second refusal is no result: the
 * runner waits and runs the item again (null).
 */
export function itemResultOf(outcome: SearchOutcome): BatchItemResult | null {
  switch (outcome.kind) {
    case 'found': {
      const url = outcome.report.report_url;
      return { status: 200, reportId: url.slice(url.lastIndexOf('/') + 1), reportUrl: url, message: null };
    }
    case 'not_found':
      return failed(404, notFoundMessage(outcome.vin, outcome.lot));
    case 'quota_exceeded':
      return failed(429, quotaExceededMessage(outcome.limits));
    case 'invalid_input':
      return failed(422, outcome.messages.join(' '));
    case 'idempotency_conflict':
      return failed(422, idempotencyConflictMessage(outcome.original));
    case 'unauthenticated':
      return failed(401, UNAUTHENTICATED_MESSAGE);
    case 'subscription_required':
      return failed(402, SUBSCRIPTION_REQUIRED_MESSAGE);
    case 'rate_limited':
      return null;
  }
}

export function failed(status: number, message: string): BatchItemResult {
  return { status, reportId: null, reportUrl: null, message };
}
