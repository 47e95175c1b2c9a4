import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ReportSchema } from '../../../domain/report.ts';
import { ErrorSchema, searchErrorResponses } from '../schemas.ts';
import { answerSearch } from './search-answer.ts';

const VinField = Type.String({
  description: 'The VIN: 17 characters, case and surrounding spaces ignored. North American VINs (first character 1-5) must carry a valid check digit.',
  examples: ['4JGBF7BE5AA585531'],
});

const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description: 'Optional, up to 255 characters. Repeating a key with the same VIN within 24 hours returns the same report and is not counted again.',
    }),
  ),
});

/** Documented on every search response that reports the limits (200, 404, 429). */
const limitHeaders = {
  'RateLimit-Policy': { type: 'string', description: 'Structured field (IETF draft): "second";q=<rate>;w=1, "month";q=<quota>;w=<period seconds>' },
  RateLimit: { type: 'string', description: 'Structured field (IETF draft): "second";r=<remaining>;t=<seconds>, "month";r=<remaining>;t=<seconds to the period reset>' },
  'X-RateLimit-Limit': { type: 'integer', description: 'Searches per second of the plan.' },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Searches left in the current one-second window.' },
};

const common = {
  tags: ['Search'],
  security: [{ apiToken: [] }],
  headers: IdempotencyHeaders,
  response: {
    ...searchErrorResponses,
    200: Type.Ref(ReportSchema, {
      description: 'The report: every known lot, newest sale first, and the link to its page.',
      headers: limitHeaders,
    }),
    404: Type.Ref(ErrorSchema, { ...searchErrorResponses[404], headers: limitHeaders }),
    429: Type.Ref(ErrorSchema, {
      ...searchErrorResponses[429],
      headers: { ...limitHeaders, 'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying.' } },
    }),
  },
};

const searchRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/api/v1/search',
    {
      onRequest: app.authenticateCustomer,
      bodyLimit: 4096,
      schema: {
        ...common,
        summary: 'Look up a VIN (JSON body)',
        description: 'Counts against the monthly quota (a 404 too). Checks in order: token, subscription, VIN, per-second rate, monthly quota.',
        operationId: 'searchPost',
        body: Type.Object({ vin: VinField }),
      },
    },
    async (request, reply) =>
      answerSearch(reply, await app.services.search.search(request.principal!, request.body.vin, request.headers['idempotency-key'])),
  );

  app.get(
    '/api/v1/search',
    {
      onRequest: app.authenticateCustomer,
      schema: {
        ...common,
        summary: 'Look up a VIN (query string)',
        description: 'Same lookup and body as POST /api/v1/search.',
        operationId: 'searchGet',
        querystring: Type.Object({ vin: VinField }),
      },
    },
    async (request, reply) =>
      answerSearch(reply, await app.services.search.search(request.principal!, request.query.vin, request.headers['idempotency-key'])),
  );
};

export default searchRoutes;
