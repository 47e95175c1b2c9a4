import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifySchemaValidationError } from 'fastify';
import { ApiError, validationError } from '../../../errors.ts';
import type { Watch } from '../../../domain/watch.ts';
import { MAX_LOT_ID, MAX_WATCHES_PAGE, type CreateWatchOutcome, type ListWatchesOutcome } from '../../../watches/watch-service.ts';
import { CURSOR_PATTERN, errorRef, jsonBodyErrorResponses, leftToTheService, MAX_CURSOR_CHARS, wwwAuthenticateHeader } from '../schemas.ts';
import { VinField } from './search.ts';

export const WatchSchema = Type.Object(
  {
    id: Type.String({ description: 'The watch id (`wch_...`).', examples: ['wch_0k3j5h2m9q8r7s6t'] }),
    vin: Type.Union([Type.String(), Type.Null()], { description: 'The VIN watched; null for a lot watch.' }),
    auction: Type.Union([Type.String(), Type.Null()], { description: 'The auction of the lot watched; null for a VIN watch.' }),
    lot_id: Type.Union([Type.Integer(), Type.Null()], { description: 'The lot watched; null for a VIN watch.' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Watch', title: 'Watch' },
);

/**
 * A VIN watch or a lot watch, never both, never neither: what the service takes, stated so that a
 * generated client or a validating proxy knows it (a VIN's check digit stays the service's 422).
 */
const WatchBody = Type.Object(
  {
    vin: Type.Optional({ ...VinField, description: 'A VIN, checked as for a search. Not with auction and lot_id.' }),
    auction: Type.Optional(Type.String({ minLength: 1, maxLength: 40, pattern: '^\\s*[A-Za-z][A-Za-z0-9_-]{0,39}\\s*$', description: 'An auction word such as `copart` or `iaai` (case ignored), with lot_id.', examples: ['copart', 'IAAI'] })),
    lot_id: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LOT_ID, description: 'The lot at that auction, with auction.' })),
  },
  {
    oneOf: [
      { required: ['vin'], properties: { auction: false, lot_id: false } },
      { required: ['auction', 'lot_id'], properties: { vin: false } },
    ],
  },
);

const WATCH_FIELDS = { vin: 'string', auction: 'string', lot_id: 'number' } as const;

/**
 * The 422 of a watch body the schema refused, unless the service words it better: a malformed
 * field, or which fields go together. Those reach the service only with fields of the right type.
 */
function refuseUnlessLeftToTheService(error: Error & { validation?: FastifySchemaValidationError[] }, body: unknown): void {
  if (!leftToTheService(error, ['/vin', '/auction', '/lot_id'])) throw error;
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  for (const [field, type] of Object.entries(WATCH_FIELDS)) {
    if (fields[field] !== undefined && typeof fields[field] !== type) throw validationError(field, [`The ${field} must be of type ${type === 'number' ? 'integer' : type}.`]);
  }
}

export const accountErrorResponses = {
  401: errorRef('UNAUTHENTICATED', 'Authorization missing, malformed, unknown or revoked. Body is exactly {"message":"Unauthenticated."}.', wwwAuthenticateHeader('vinhistory')),
  403: errorRef('LIVE_TOKEN_REQUIRED', 'A sandbox token (`vh_test_`): watches and the webhook act on live data and take only live tokens.'),
  503: errorRef('DATABASE_BUSY', 'The database is busy; nothing was changed. Try again after Retry-After.', { 'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying.' } }),
  '5xx': errorRef('INTERNAL', 'A fault of the service. The message carries a request id and no internals.'),
};

/**
 * Query strings are not coerced (the app's Ajv has coerceTypes off): a page size is the digits of
 * a whole number from 1 to 100, as a pattern that says exactly that, so that a page size the
 * document allows is one the service takes.
 */
export function pageQuery(max: 100, fallback: number) {
  return Type.Object({
    limit: Type.Optional(Type.String({ pattern: '^(?:[1-9][0-9]?|100)$', description: `Items per page, 1 to ${max} (${fallback} unless given).`, examples: [String(fallback), '1', String(max)] })),
    cursor: Type.Optional(Type.String({ maxLength: MAX_CURSOR_CHARS, pattern: CURSOR_PATTERN, description: 'The `next_cursor` of the previous page, as given.' })),
  });
}

/** The page size asked for: the schema's pattern holds it to 1..100. */
export function pageLimit(value: string | undefined, fallback: number): number {
  return value === undefined ? fallback : Number(value);
}

export function watchJson(watch: Watch) {
  return { id: watch.id, vin: watch.vin, auction: watch.auction, lot_id: watch.lotId, created_at: watch.createdAt };
}

/*
 * The watches' answers, shared with the MCP server's watch tools (src/mcp/), which must say what
 * the API says: each refusal is the API error it is answered with.
 */

/** A watch's creation: 201 and the new watch, 200 and the existing one, or the refusal. */
export function createdWatch(outcome: CreateWatchOutcome): { status: 200 | 201; watch: ReturnType<typeof watchJson> } {
  switch (outcome.kind) {
    case 'invalid':
      throw validationError(outcome.field, outcome.messages);
    case 'no-plan':
      throw new ApiError('WATCH_LIMIT_REACHED', 'Your account has no plan in force, so it can hold no watches. Choose a plan in your personal account first.');
    case 'over-limit':
      throw new ApiError('WATCH_LIMIT_REACHED', `Your plan allows ${outcome.limit} watches and you have that many. Remove one, or move to a larger plan.`);
    case 'exists':
      return { status: 200, watch: watchJson(outcome.watch) };
    case 'created':
      return { status: 201, watch: watchJson(outcome.watch) };
  }
}

/** A page of watches, or the refusal of a cursor this API did not give. */
export function watchesPage(outcome: ListWatchesOutcome) {
  if (outcome.kind === 'bad-cursor') throw validationError('cursor', ['The cursor is not one this API gave; start again without it.']);
  return { data: outcome.page.items.map(watchJson), next_cursor: outcome.page.nextCursor };
}

export const noSuchWatchError = (): ApiError => new ApiError('NOT_FOUND', 'You have no watch with that id.');

const watchesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { watches } = app.services;
  app.addSchema(WatchSchema);

  app.post(
    '/api/v1/watches',
    {
      onRequest: app.authenticateAccount,
      bodyLimit: 4096,
      attachValidation: true,
      schema: {
        tags: ['Watches'],
        summary: 'Watch a VIN or an auction lot',
        description:
          'Body `{"vin": "..."}` (every lot of the vehicle) or `{"auction": "copart", "lot_id": 12345678}` (that lot). Events for it go to the webhook endpoint. ' +
          'Not counted as a search. The same VIN (or lot) again answers the existing watch with 200. The plan in force limits how many watches an account holds ' +
          '(Standard 100, Professional 500, VIP 2,000): one more is 409, as is any watch without a plan in force.',
        operationId: 'createWatch',
        security: [{ apiToken: [] }],
        body: WatchBody,
        response: {
          201: Type.Ref(WatchSchema, { description: 'The watch was created.' }),
          200: Type.Ref(WatchSchema, { description: 'The account already watches that VIN (or lot): the existing watch.' }),
          ...accountErrorResponses,
          ...jsonBodyErrorResponses,
          409: errorRef('WATCH_LIMIT_REACHED', "The plan's watch limit is reached, or the account has no plan in force; the message says which."),
          413: errorRef('PAYLOAD_TOO_LARGE', 'Request body too large (the limit is 4 KiB).'),
          422: errorRef('VALIDATION_FAILED', 'vin malformed, auction or lot_id missing or malformed, or neither or both given; `errors` says which field.'),
        },
      },
    },
    async (request, reply) => {
      if (request.validationError) refuseUnlessLeftToTheService(request.validationError, request.body);
      const principal = request.tokenPrincipal!;
      const answer = createdWatch(await watches.create(principal.accountId, { vin: request.body.vin, auction: request.body.auction, lotId: request.body.lot_id }));
      return reply.code(answer.status).send(answer.watch);
    },
  );

  app.get(
    '/api/v1/watches',
    {
      onRequest: app.authenticateAccount,
      schema: {
        tags: ['Watches'],
        summary: "The account's watches, newest first",
        description: 'Cursor paging: pass `next_cursor` as `cursor` for the next page; it is null on the last page.',
        operationId: 'listWatches',
        security: [{ apiToken: [] }],
        querystring: pageQuery(MAX_WATCHES_PAGE, 50),
        response: {
          200: Type.Object(
            { data: Type.Array(Type.Ref(WatchSchema)), next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'The cursor of the next page, or null.' }) },
            { description: 'A page of watches.' },
          ),
          ...accountErrorResponses,
          422: errorRef('VALIDATION_FAILED', 'limit out of range, or a cursor that is well formed but not one of ours.'),
        },
      },
    },
    async (request) => {
      return watchesPage(await watches.list(request.tokenPrincipal!.accountId, { limit: pageLimit(request.query.limit, 50), cursor: request.query.cursor }));
    },
  );

  app.delete(
    '/api/v1/watches/:id',
    {
      onRequest: app.authenticateAccount,
      schema: {
        tags: ['Watches'],
        summary: 'Stop watching',
        description: 'Removes a watch of the account: no more events come for it. Another account\'s watch is answered as one that does not exist (404).',
        operationId: 'deleteWatch',
        security: [{ apiToken: [] }],
        params: Type.Object({ id: Type.String({ maxLength: 64, description: 'The watch id (`wch_...`).' }) }),
        response: {
          204: Type.Null({ description: 'The watch is removed; no more events come for it.' }),
          ...accountErrorResponses,
          404: errorRef('NOT_FOUND', 'The account has no watch of that id.'),
          422: errorRef('VALIDATION_FAILED', 'An id longer than 64 characters (no watch id is); `errors.id` says so.'),
        },
      },
    },
    async (request, reply) => {
      if (!(await watches.delete(request.tokenPrincipal!.accountId, request.params.id))) throw noSuchWatchError();
      return reply.code(204).send(null);
    },
  );
};

export default watchesRoutes;
