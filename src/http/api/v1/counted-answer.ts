import type { FastifyReply } from 'fastify';
import { ApiError } from '../../../errors.ts';
import { limitHeaders } from '../../../limits/limit-headers.ts';
import type { CountedOutcome } from '../../../search/search-service.ts';
import { answerSearch } from './search-answer.ts';

/**
 * A counted call's outcome as HTTP (catalogue, market, a lot's history): its body through the
 * route's serialiser with the limit headers, a counted 404 with its message, and every refusal
 * exactly as a search answers it (search-answer.ts).
 */
export function answerCounted<T>(reply: FastifyReply, outcome: CountedOutcome<T>): FastifyReply {
  switch (outcome.kind) {
    case 'found': {
      const headers = limitHeaders(outcome.limits);
      if (outcome.replayed) headers['idempotent-replayed'] = 'true';
      return reply.headers(headers).send(outcome.body);
    }
    case 'not_found': {
      const headers = limitHeaders(outcome.limits);
      if (outcome.replayed) headers['idempotent-replayed'] = 'true';
      throw new ApiError('NO_RECORDS', outcome.message, { headers });
    }
    default:
      return answerSearch(reply, outcome);
  }
}
