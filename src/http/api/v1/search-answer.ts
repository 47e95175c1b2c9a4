import type { FastifyReply } from 'fastify';
import { ApiError, validationError } from '../../../errors.ts';
import { limitHeaders, retryAfter } from '../../../limits/limit-headers.ts';
import type { SearchOutcome } from '../../../search/search-service.ts';
import { reportJson } from '../../../domain/report.ts';
import { invalidTokenError, subscriptionRequiredError } from '../../plugins/authentication.ts';

/**
 * A search's outcome as HTTP: status, body and headers, in this one place. A report is sent; every
 * other outcome leaves as an API error, whose status and body the error handler writes.
 */
export function answerSearch(reply: FastifyReply, outcome: SearchOutcome): FastifyReply {
  if (outcome.kind !== 'found') throw searchRefusal(outcome);
  const headers = limitHeaders(outcome.limits);
  if (outcome.replayed) headers['idempotent-replayed'] = 'true';
  // The lots are the store's JSON text: the body is written here, not by the route's serialiser
  // (reportJson keeps to ReportSchema, which still documents the answer).
  headers['content-type'] = 'application/json; charset=utf-8';
  return reply.headers(headers).send(reportJson(outcome.report));
}

/**
 * Every outcome but a report, as the API error it is answered with (status, message, headers):
 * the API's and the MCP server's tools' (src/mcp/) one wording of each refusal.
 */
export function searchRefusal(outcome: Exclude<SearchOutcome, { kind: 'found' }>): ApiError {
  switch (outcome.kind) {
    case 'not_found': {
      const headers = limitHeaders(outcome.limits);
      if (outcome.replayed) headers['idempotent-replayed'] = 'true';
      const message = outcome.lot
        ? `No lot ${outcome.lot.lotId} is known at ${outcome.lot.auction}.`
        : `No auction records were found for VIN ${outcome.vin}.`;
      return new ApiError('NO_RECORDS', message, { headers });
    }
    case 'rate_limited': {
      const { rate } = outcome.limits;
      return new ApiError(
        'RATE_LIMITED',
        `Rate limit exceeded: your plan allows ${rate.limit} searches per second. Retry after the Retry-After delay.`,
        { headers: { ...limitHeaders(outcome.limits), 'retry-after': retryAfter(rate.resetMs) } },
      );
    }
    case 'quota_exceeded': {
      const { quota, now } = outcome.limits;
      return new ApiError(
        'QUOTA_EXCEEDED',
        `Monthly quota exceeded: your plan includes ${quota.limit} searches per billing period, which resets at ${quota.periodEnd.toISOString()}.`,
        { headers: { ...limitHeaders(outcome.limits), 'retry-after': retryAfter(quota.periodEnd.getTime() - now.getTime()) } },
      );
    }
    case 'idempotency_conflict':
      return validationError('Idempotency-Key', [
        `This Idempotency-Key was used for ${outcome.original} in the last 24 hours; use a new key for another search.`,
      ], 'IDEMPOTENCY_CONFLICT');
    case 'invalid_input':
      return validationError(outcome.field, outcome.messages);
    case 'unauthenticated':
      return invalidTokenError();
    case 'subscription_required':
      return subscriptionRequiredError();
  }
}
