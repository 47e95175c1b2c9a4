import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ReportSchema } from '../../../domain/report.ts';
import { errorRef, jsonBodyErrorResponses, retryAfterHeader, SEARCH_LIMITED, SEARCH_NO_RECORDS, searchErrorResponses, type HeaderDoc } from '../schemas.ts';
import { answerSearch } from './search-answer.ts';

const VIN_RULE =
  'The VIN: 17 characters of 0-9 A-H J-N P R-Z (never I, O or Q), case and surrounding spaces ignored. North American VINs (first character 1-5) must carry a valid check digit.';
const VIN_EXAMPLES = ['4JGBF7BE5AA585531'];

/**
 * The VIN as the service takes it (domain/vin.ts): 17 characters of 0-9 A-H J-N P R-Z, in either
 * case, surrounding white space ignored (`\s` is the set String.prototype.trim removes). The check
 * digit of North American VINs is beyond a pattern: the service checks it (422).
 */
export const VinField = Type.String({
  description: VIN_RULE,
  minLength: 17,
  pattern: '^\\s*[0-9A-HJ-NPR-Za-hj-npr-z]{17}\\s*$',
  examples: VIN_EXAMPLES,
});

/**
 * The search's own vin: any string, its rule in words. A validating proxy (Prism with `--errors`)
 * refuses whatever breaks a schema with its own 422, documented 422 or not, so a pattern here kept a
 * malformed VIN from ever reaching the server's 422 and its `errors.vin`; a bad check digit reaches
 * it either way. The watch body keeps VinField's pattern: there the document states the bound.
 */
export const SearchVinField = Type.String({
  description: `${VIN_RULE} Anything else is answered 422 with errors.vin saying what is wrong.`,
  examples: VIN_EXAMPLES,
});

/**
 * Like the search's vin, the key's rule is in words and its refusal is the server's 422
 * (errors['Idempotency-Key'], the search service's check): a malformed key is the client's to fix,
 * and only the server can say so in its own body.
 */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Optional: 1 to 255 visible ASCII characters (surrounding spaces ignored); anything else is answered 422 with errors[\'Idempotency-Key\']. ' +
        'Repeating a key with the same VIN within 24 hours returns the same report and is not counted again.',
      examples: ['order-42'],
    }),
  ),
});

/** Documented on every search response that reports the limits (200, 404, 429). */
export const limitHeaders: Record<string, HeaderDoc> = {
  'RateLimit-Policy': { type: 'string', description: 'Structured field (IETF draft): "second";q=<rate>;w=1, "month";q=<quota>;w=<period seconds>' },
  RateLimit: { type: 'string', description: 'Structured field (IETF draft): "second";r=<remaining>;t=<seconds>, "month";r=<remaining>;t=<seconds to the period reset>' },
  'X-RateLimit-Limit': { type: 'integer', description: 'Searches per second of the plan.' },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Searches left in the current one-second window.' },
};

/** On a 200 or 404 that repeats an earlier search of the same Idempotency-Key (not counted again). */
export const replayedHeader: Record<string, HeaderDoc> = {
  'Idempotent-Replayed': { type: 'string', enum: ['true'], description: 'Present (`true`) when the answer repeats an earlier search made with the same Idempotency-Key; absent otherwise.' },
};

const common = {
  tags: ['Search'],
  security: [{ apiToken: [] }],
  headers: IdempotencyHeaders,
  response: {
    ...searchErrorResponses,
    200: Type.Ref(ReportSchema, {
      description: 'The report: every known lot, newest sale first, and the link to its page.',
      headers: { ...limitHeaders, ...replayedHeader },
    }),
    404: errorRef('NO_RECORDS', SEARCH_NO_RECORDS, { ...limitHeaders, ...replayedHeader }),
    429: errorRef(['RATE_LIMITED', 'QUOTA_EXCEEDED'], SEARCH_LIMITED, { ...limitHeaders, ...retryAfterHeader }),
  },
};

const searchRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/api/v1/search',
    {
      onRequest: app.authenticateSearch,
      bodyLimit: 4096,
      schema: {
        ...common,
        summary: 'Look up a VIN (JSON body)',
        description: 'Counts against the monthly quota (a 404 too). Checks in order: token, subscription, VIN, per-second rate, monthly quota.',
        operationId: 'searchPost',
        body: Type.Object({ vin: SearchVinField }),
        response: { ...common.response, ...jsonBodyErrorResponses },
      },
    },
    async (request, reply) => {
      return answerSearch(reply, await app.services.search.search(request.principal!, request.body.vin, request.headers['idempotency-key']));
    },
  );

  app.get(
    '/api/v1/search',
    {
      onRequest: app.authenticateSearch,
      schema: {
        ...common,
        summary: 'Look up a VIN (query string)',
        description: 'Same lookup and body as POST /api/v1/search.',
        operationId: 'searchGet',
        querystring: Type.Object({ vin: SearchVinField }),
      },
    },
    async (request, reply) => {
      return answerSearch(reply, await app.services.search.search(request.principal!, request.query.vin, request.headers['idempotency-key']));
    },
  );
};

export default searchRoutes;
