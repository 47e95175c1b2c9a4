import { ApiError } from '../errors.ts';
import { limitHeaders } from '../limits/limit-headers.ts';
import type { CountedOutcome } from '../search/search-service.ts';
import { searchRefusal } from '../http/api/v1/search-answer.ts';

/** What a counted call cost, said at the end of its tool's summary. */
export function countedCost(sandbox: boolean, replayed: boolean): string {
  if (sandbox) return 'Sandbox token: test data, not counted against the quota.';
  if (replayed) return 'A repeat of an earlier call with the same idempotency key: not counted again.';
  return 'Counted as one call against the monthly quota.';
}

/**
 * A counted call's outcome (catalogue, market, a lot's history) as its tool answers it: the body
 * the endpoint answers, or its refusal, thrown as http/api/v1/counted-answer.ts throws it (a
 * counted 404 with its message; every other refusal as a search's).
 */
export function countedBody<T>(outcome: CountedOutcome<T>): { body: T; replayed: boolean } {
  switch (outcome.kind) {
    case 'found':
      return { body: outcome.body, replayed: outcome.replayed };
    case 'not_found':
      throw new ApiError('NO_RECORDS', outcome.message, { headers: limitHeaders(outcome.limits) });
    default:
      throw searchRefusal(outcome);
  }
}

/** A tool's arguments as the query string its endpoint reads (the catalogue's and the market's services check each parameter). */
export function queryOf(args: Record<string, string | number | undefined>): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(args)) if (value !== undefined) params.set(name, String(value));
  return params;
}
