import type { FastifyReply } from 'fastify';
import { ApiError, validationError } from '../../../errors.ts';
import { limitHeaders, retryAfter } from '../../../limits/limit-headers.ts';
import type { SearchOutcome } from '../../../search/search-service.ts';
import { reportJson } from '../../../domain/report.ts';
import { idempotencyConflictMessage, notFoundMessage, quotaExceededMessage, rateLimitedMessage } from '../../../search/outcome-messages.ts';
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
      return new ApiError('NO_RECORDS', notFoundMessage(outcome.vin, outcome.lot), { headers });
    }
    case 'rate_limited': {
      const { rate } = outcome.limits;
      return new ApiError(
        'RATE_LIMITED',
        rateLimitedMessage(outcome.limits),
        { headers: { ...limitHeaders(outcome.limits), 'retry-after': retryAfter(rate.resetMs) } },
      );
    }
    case 'quota_exceeded': {
      const { quota, now } = outcome.limits;
      return new ApiError(
        'QUOTA_EXCEEDED',
        quotaExceededMessage(outcome.limits),
        { headers: { ...limitHeaders(outcome.limits), 'retry-after': retryAfter(quota.periodEnd.getTime() - now.getTime()) } },
      );
    }
    case 'idempotency_conflict':
      return validationError('Idempotency-Key', [idempotencyConflictMessage(outcome.original)], 'IDEMPOTENCY_CONFLICT');
    case 'invalid_input':
      return validationError(outcome.field, outcome.messages);
    case 'unauthenticated':
      return invalidTokenError();
    case 'subscription_required':
      return subscriptionRequiredError();
  }
}
