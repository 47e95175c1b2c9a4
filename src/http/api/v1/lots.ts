import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ReportSchema } from '../../../domain/report.ts';
import { errorRef, leftToTheService, retryAfterHeader, SEARCH_LIMITED, searchErrorResponses } from '../schemas.ts';
import { answerSearch } from './search-answer.ts';
import { IdempotencyHeaders, limitHeaders, replayedHeader } from './search.ts';

/** A GET has no body: the search's 413 cannot happen here. */
const { 413: _bodyTooLarge, ...errorResponses } = searchErrorResponses;

export const LotParams = Type.Object({
  auction: Type.String({
    description: 'The auction, a lower-case word: one the service holds lots from (`copart`, `iaai`, ...); another word answers 422 (errors.auction).',
    maxLength: 40,
    pattern: '^[a-z][a-z0-9_-]*$',
    examples: ['copart'],
  }),
  lot_id: Type.String({
    description: 'The lot id at that auction: a positive whole number (1 to 2147483647); anything else answers 422 (errors.lot_id).',
    maxLength: 10,
    pattern: '^[0-9]{1,10}$',
    examples: ['90000011'],
  }),
});

/**
 * A malformed auction or lot id (pattern, length) is left to the search service, whose messages
 * say what is wrong and list the known auctions, under errors.auction or errors.lot_id.
 */
export const SERVICE_CHECKED = ['/auction', '/lot_id'];

/** Lookup by lot: the same Report, checks, counting, headers and Idempotency-Key rule as a search by VIN. */
const lotRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/v1/lots/:auction/:lot_id',
    {
      onRequest: app.authenticateSearch,
      attachValidation: true,
      schema: {
        tags: ['Search'],
        security: [{ apiToken: [] }],
        summary: 'Look up the vehicle of an auction lot',
        description:
          "Answers the same Report as a search for the lot's VIN: every lot of the vehicle, not only this one. A search in every other respect: " +
          'counts against the monthly quota (a 404 too), the same limit headers and Idempotency-Key rule (a repeat of the key must name the same lot), a stored report. ' +
          'Checks in order: token, subscription, auction and lot id, per-second rate, monthly quota.',
        operationId: 'lotLookup',
        params: LotParams,
        headers: IdempotencyHeaders,
        response: {
          ...errorResponses,
          200: Type.Ref(ReportSchema, {
            description: "The report of the lot's vehicle: every known lot of its VIN, newest sale first, and the link to its page.",
            headers: { ...limitHeaders, ...replayedHeader },
          }),
          404: errorRef('NO_RECORDS', 'The auction and lot id are well formed but no such lot is known. Counts against the quota.', { ...limitHeaders, ...replayedHeader }),
          422: errorRef(['VALIDATION_FAILED', 'IDEMPOTENCY_CONFLICT'], 'An unknown auction (errors.auction lists the known ones), a malformed lot id (errors.lot_id), a malformed Idempotency-Key, or one used for another search in the last 24 hours.'),
          429: errorRef(['RATE_LIMITED', 'QUOTA_EXCEEDED'], SEARCH_LIMITED, { ...limitHeaders, ...retryAfterHeader }),
        },
      },
    },
    async (request, reply) => {
      if (request.validationError && !leftToTheService(request.validationError, SERVICE_CHECKED, ['pattern', 'minLength', 'maxLength'])) throw request.validationError;
      const { auction, lot_id: lotId } = request.params;
      return answerSearch(reply, await app.services.search.searchByLot(request.principal!, auction, lotId, request.headers['idempotency-key']));
    },
  );
};

export default lotRoutes;
