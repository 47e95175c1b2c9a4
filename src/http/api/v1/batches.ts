import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError, validationError } from '../../../errors.ts';
import { batchJson, MAX_BATCH_ITEMS, type BatchItem } from '../../../domain/batch.ts';
import { csvHeader, itemLine, itemRows } from '../../../batches/batch-results.ts';
import { MAX_BATCHES_PAGE, type CreateBatchOutcome } from '../../../batches/batch-service.ts';
import { authErrorResponses, errorRef } from '../schemas.ts';
import { IdempotencyHeaders } from './search.ts';
import { pageLimit, pageQuery } from './watches.ts';

/** A batch body: 1,000 items of JSON are about 60 KiB; a spreadsheet's CSV of 1,000 rows with a few more columns fits too. */
export const BATCH_BODY_LIMIT = 512 * 1024;

export const BatchSchema = Type.Object(
  {
    id: Type.String({ description: 'The batch id (`bat_...`).', examples: ['bat_0k3j5h2m9q8r7s6t'] }),
    status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('done')], { description: 'queued: no item has run yet; running: items are running; done: every item has its result.' }),
    total: Type.Integer({ description: 'How many items the batch holds.' }),
    done: Type.Integer({ description: 'How many items have their result.' }),
    counts: Type.Record(Type.String({ pattern: '^[0-9]{3}$' }), Type.Integer(), {
      description: 'Finished items per HTTP status their search had, e.g. {"200": 7, "404": 2, "422": 1, "429": 0}; a status no item had is left out.',
    }),
    created_at: Type.String({ format: 'date-time' }),
    finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the last item finished; null until then.' }),
  },
  { $id: 'Batch', title: 'Batch' },
);

const BatchItemInputSchema = Type.Union([
  Type.Object({ vin: Type.String({ maxLength: 64, description: 'A VIN, checked by the item\'s search (a malformed one is that item\'s 422).' }) }, { description: 'A search by VIN; no other field.' }),
  Type.Object(
    {
      auction: Type.String({ minLength: 1, maxLength: 40, description: 'An auction word (`copart`, `iaai`, ...), checked by the item\'s lookup.' }),
      lot_id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
    },
    // Not additionalProperties: false, which the app's Ajv (removeAdditional) would act on by
    // stripping a VIN given beside a lot; the service refuses such an item by its index instead.
    { description: 'A lookup by lot; no other field.' },
  ),
]);

const BatchBodySchema = Type.Object({
  items: Type.Array(BatchItemInputSchema, { minItems: 1, maxItems: MAX_BATCH_ITEMS, description: `1 to ${MAX_BATCH_ITEMS} items, each a VIN or an auction lot.`, examples: [[{ vin: '4JGBF7BE5AA585531' }, { auction: 'copart', lot_id: 90000011 }]] }),
});

const CsvBodySchema = Type.String({
  description: 'A CSV with a header row naming a `vin` column (other columns are ignored; a row with an empty vin may name a lot in `auction` and `lot_id` columns). 1 to 1,000 rows.',
  examples: ['vin\n1HGCM82633A004352\n5N1DL0MM5KC512345\n'],
});

const BatchParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'The batch id (`bat_...`).' }) });

const notFound = errorRef('NOT_FOUND', 'The account has no batch of that id.');

const batchesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { batches } = app.services;
  app.addSchema(BatchSchema);
  // In this scope only: the API reads JSON everywhere else.
  app.addContentTypeParser('text/csv', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  app.post(
    '/api/v1/batches',
    {
      onRequest: app.authenticateCustomer,
      bodyLimit: BATCH_BODY_LIMIT,
      // The service words every refusal of the body (which item, which line).
      attachValidation: true,
      schema: {
        tags: ['Batches'],
        summary: 'Run up to 1,000 searches in the background',
        description:
          'Body `{"items": [{"vin": "..."} | {"auction": "...", "lot_id": n}, ...]}` (JSON) or a CSV (`Content-Type: text/csv`) with a `vin` column. ' +
          'Each item is a search (or lookup by lot) in every respect: counted against the monthly quota, recorded, its report stored; items past the quota end as 429 items, not as an error of the batch. ' +
          "Items run within the account's per-second rate, using at most half of it (at least 1 per second), so live searches always have the other half. " +
          'The answer is 202 with the batch queued; follow it with GET /api/v1/batches/{id} or the `batch.completed` webhook event. ' +
          'Idempotency-Key: the same key with the same items answers the same batch (200); with other items, 422.',
        operationId: 'createBatch',
        security: [{ apiToken: [] }],
        headers: IdempotencyHeaders,
        body: { content: { 'application/json': { schema: BatchBodySchema }, 'text/csv': { schema: CsvBodySchema } } } as never,
        response: {
          202: Type.Ref(BatchSchema, { description: 'The batch is stored and queued.' }),
          200: Type.Ref(BatchSchema, { description: 'The Idempotency-Key was used with the same items: the batch made then, as it stands.' }),
          ...authErrorResponses,
          400: errorRef('BAD_REQUEST', 'The body is not valid JSON.'),
          413: errorRef('PAYLOAD_TOO_LARGE', `Request body too large (the limit is ${BATCH_BODY_LIMIT / 1024} KiB).`),
          415: errorRef('UNSUPPORTED_MEDIA_TYPE', 'The Content-Type is neither application/json nor text/csv.'),
          422: errorRef(
            ['VALIDATION_FAILED', 'IDEMPOTENCY_CONFLICT'],
            'No items or more than 1,000, an item that is neither a VIN nor a lot (errors.items names it), a CSV without a vin column or that cannot be read (errors.body, with the line), a malformed Idempotency-Key, or one used for another batch.',
          ),
        },
      },
    },
    async (request, reply) => {
      const body = typeof request.body === 'string' ? { kind: 'csv' as const, text: request.body } : { kind: 'json' as const, body: request.body };
      const outcome: CreateBatchOutcome = await batches.create(request.principal!, body, request.headers['idempotency-key']);
      switch (outcome.kind) {
        case 'created':
          return reply.code(202).send(batchJson(outcome.batch));
        case 'replayed':
          return reply.code(200).send(batchJson(outcome.batch));
        case 'idempotency_conflict':
          throw validationError('Idempotency-Key', [`This Idempotency-Key was used for batch ${outcome.batchId}, with other items; use a new key for another batch.`], 'IDEMPOTENCY_CONFLICT');
        case 'invalid':
          throw validationError(outcome.field, outcome.messages);
      }
    },
  );

  app.get(
    '/api/v1/batches',
    {
      onRequest: app.authenticateCustomer,
      schema: {
        tags: ['Batches'],
        summary: "The account's batches, newest first",
        description: 'Cursor paging: pass `next_cursor` as `cursor` for the next page; it is null on the last page.',
        operationId: 'listBatches',
        security: [{ apiToken: [] }],
        querystring: pageQuery(MAX_BATCHES_PAGE, 25),
        response: {
          200: Type.Object(
            { data: Type.Array(Type.Ref(BatchSchema)), next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'The cursor of the next page, or null.' }) },
            { description: 'A page of batches.' },
          ),
          ...authErrorResponses,
          422: errorRef('VALIDATION_FAILED', 'limit out of range, or a cursor that is well formed but not one of ours.'),
        },
      },
    },
    async (request) => {
      const outcome = await batches.list(request.principal!.accountId, { limit: pageLimit(request.query.limit, 25), cursor: request.query.cursor });
      if (outcome.kind === 'bad-cursor') throw validationError('cursor', ['The cursor is not one this API gave; start again without it.']);
      return { data: outcome.page.items.map(batchJson), next_cursor: outcome.page.nextCursor };
    },
  );

  app.get(
    '/api/v1/batches/:id',
    {
      onRequest: app.authenticateCustomer,
      schema: {
        tags: ['Batches'],
        summary: 'A batch and how far it has run',
        description: '`counts` holds the finished items per HTTP status; `done` of `total` have run.',
        operationId: 'getBatch',
        security: [{ apiToken: [] }],
        params: BatchParams,
        response: { 200: Type.Ref(BatchSchema, { description: 'The batch.' }), ...authErrorResponses, 404: notFound, 422: errorRef('VALIDATION_FAILED', 'An id longer than 64 characters (no batch id is).') },
      },
    },
    async (request) => {
      const batch = await batches.find(request.principal!.accountId, request.params.id);
      if (!batch) throw new ApiError('NOT_FOUND', 'You have no batch with that id.');
      return batchJson(batch);
    },
  );

  app.get(
    '/api/v1/batches/:id/results',
    {
      onRequest: app.authenticateCustomer,
      schema: {
        tags: ['Batches'],
        summary: "A batch's results, in input order",
        description:
          'NDJSON (`application/x-ndjson`): one line per item in input order, `{"index", "input", "status", "report", "message"}`, `status` the HTTP status the search had (null for an item that has not run yet), ' +
          '`report` the Report of a 200 (else null) and `message` the error message of any other status (else null). ' +
          'With `Accept: text/csv`: CSV with one row per lot (index, input, status, message, report_url and the Lot\'s fields; an item without lots is one row).',
        operationId: 'getBatchResults',
        security: [{ apiToken: [] }],
        params: BatchParams,
        response: {
          200: {
            description: 'The results, streamed.',
            content: {
              'application/x-ndjson': { schema: Type.String({ description: 'One JSON object per line, per item, in input order.' }) },
              'text/csv': { schema: Type.String({ description: 'A header row, then one row per lot of each item, in input order.' }) },
            },
          },
          ...authErrorResponses,
          404: notFound,
          422: errorRef('VALIDATION_FAILED', 'An id longer than 64 characters (no batch id is).'),
        } as never,
      },
    },
    async (request, reply) => {
      const batch = await batches.find(request.principal!.accountId, request.params.id);
      if (!batch) throw new ApiError('NOT_FOUND', 'You have no batch with that id.');
      const csv = (request.headers.accept ?? '').toLowerCase().includes('text/csv');
      const lines = async function* (items: AsyncIterable<BatchItem>): AsyncGenerator<string> {
        if (csv) yield csvHeader();
        for await (const item of items) yield csv ? itemRows(item) : itemLine(item);
      };
      return reply
        .header('content-type', csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .header('content-disposition', `inline; filename="${batch.id}.${csv ? 'csv' : 'ndjson'}"`)
        .send(Readable.from(lines(batches.items(batch.id))));
    },
  );
};

export default batchesRoutes;
