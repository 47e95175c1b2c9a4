import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { LotHistorySchema } from '../../../domain/lot-history.ts';
import { errorRef, leftToTheService, retryAfterHeader, SEARCH_LIMITED, searchErrorResponses } from '../schemas.ts';
import { answerCounted } from './counted-answer.ts';
import { LotParams, SERVICE_CHECKED } from './lots.ts';
import { IdempotencyHeaders, limitHeaders, replayedHeader } from './search.ts';

/** A GET has no body: the search's 413 cannot happen here. */
const { 413: _bodyTooLarge, ...errorResponses } = searchErrorResponses;

/** A lot's history (contract, "Lot history"): counted, like a search in every respect but that it stores no report. */
const lotHistoryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  if (!app.getSchema(LotHistorySchema.$id!)) app.addSchema(LotHistorySchema);
  app.get(
    '/api/v1/lots/:auction/:lot_id/history',
    {
      onRequest: app.authenticateSearch,
      attachValidation: true,
      schema: {
        tags: ['Search'],
        security: [{ apiToken: [] }],
        summary: "A lot's history: every state the service has seen of it",
        description:
          'Every version of one lot, oldest first: the first has every known field (from null), each later one what an import changed (from, to), when and from which source. ' +
          'A re-import that changes nothing adds no version but moves last_seen_at. Counted like a search: the monthly quota (a 404 too), the limit headers and the Idempotency-Key rule (a repeat of the key must name the same lot); it stores no report. ' +
          'Checks in order: token, subscription, auction and lot id, per-second rate, monthly quota.',
        operationId: 'lotHistory',
        params: LotParams,
        headers: IdempotencyHeaders,
        response: {
          ...errorResponses,
          200: Type.Ref(LotHistorySchema, { description: "The lot's history.", headers: { ...limitHeaders, ...replayedHeader } }),
          404: errorRef('NO_RECORDS', 'The auction and lot id are well formed but no such lot is known. Counts against the quota.', { ...limitHeaders, ...replayedHeader }),
          422: errorRef(['VALIDATION_FAILED', 'IDEMPOTENCY_CONFLICT'], 'An unknown auction (errors.auction lists the known ones), a malformed lot id (errors.lot_id), a malformed Idempotency-Key, or one used for another call in the last 24 hours.'),
          429: errorRef(['RATE_LIMITED', 'QUOTA_EXCEEDED'], SEARCH_LIMITED, { ...limitHeaders, ...retryAfterHeader }),
        },
      },
    },
    async (request, reply) => {
      if (request.validationError && !leftToTheService(request.validationError, SERVICE_CHECKED, ['pattern', 'minLength', 'maxLength'])) throw request.validationError;
      const { auction, lot_id: lotId } = request.params;
      return answerCounted(reply, await app.services.history.historyOfLot(request.principal!, { auction, lotId }, request.headers['idempotency-key']));
    },
  );
};

export default lotHistoryRoutes;
