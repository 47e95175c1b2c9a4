import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from '../../errors.ts';
import type { RejectedRecord } from '../../ingest/import-summary.ts';
import { IngestError } from '../../ingest/ingest-error.ts';
import operatorAuth from '../plugins/operator-auth.ts';
import { errorRef, wwwAuthenticateHeader } from '../api/schemas.ts';
import { requestActor } from './schemas.ts';

/** Largest body accepted: about a million lots of canonical NDJSON. */
export const ADMIN_LOTS_BODY_LIMIT = 1024 ** 3;
/** Skipped records listed in the answer; the rest are counted. */
export const REJECTED_LISTED = 100;
/**
 * Lots per transaction: smaller than the CLI's, because the server's searches share the SQLite
 * connection and wait for the batch in hand.
 */
const BATCH_SIZE = 500;
const NDJSON_TYPES = new Set(['application/x-ndjson', 'application/ndjson', 'application/jsonl', 'application/x-jsonlines']);

const AdminImportResultSchema = Type.Object(
  {
    format: Type.String({ description: 'What the body was read as, e.g. "canonical lots (NDJSON)" or "auctionsapi vehicle records (NDJSON, gzip)".' }),
    read: Type.Integer({ description: 'Records read (non-blank lines; a vendor vehicle record counts once per lot).' }),
    inserted: Type.Integer({ description: 'New lots.' }),
    updated: Type.Integer({ description: 'Stored lots whose fields changed.' }),
    unchanged: Type.Integer({ description: 'Stored lots the body repeated as they were.' }),
    skipped: Type.Integer({ description: 'Records that are not valid lots (listed in `rejected`).' }),
    rejected: Type.Array(
      Type.Object({
        line: Type.Integer({ description: 'Line of the body the record starts on.' }),
        reason: Type.String({ description: 'Every wrong field: "vin: ...; price: ...".' }),
      }),
      { description: `The first ${REJECTED_LISTED} skipped records, in body order.` },
    ),
    rejected_not_listed: Type.Integer({ description: 'Skipped records beyond those listed.' }),
  },
  { $id: 'AdminImportResult', title: 'AdminImportResult' },
);

class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the request body is larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** Passes the body through, failing it once more than `limit` bytes have come. */
function limitBytes(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      seen += chunk.length;
      if (seen > limit) callback(new BodyTooLargeError(limit));
      else callback(null, chunk);
    },
  });
}

/**
 * The body as documented: NDJSON text, read by the route as a stream (see the content-type parser
 * below), so Fastify never holds it as a string; its records are checked one by one by the importer.
 */
const LotsBodySchema = Type.Unsafe<Readable | undefined>({
  type: 'string',
  description:
    'NDJSON, one record per line: canonical Lot objects, or auctionsapi vehicle records with their lots. ' +
    'The body may be gzip-compressed (recognised by its content; send it with the same Content-Type, without Content-Encoding).',
});

/**
 * Ingestion over HTTP for scrapers and partners: the same importer as `vinhistory import`, fed by
 * the request body as it arrives (never buffered whole), with the same rules: good lots upserted
 * by (auction, lot_id) with the same merge rule, bad records skipped and reported, a body cut
 * short keeping what came before the cut.
 */
const adminLotsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(operatorAuth);
  app.addSchema(AdminImportResultSchema);
  // This scope reads no body itself: the route gets the raw stream whatever the type, so that a
  // wrong type is refused before a byte of it is read (and answered with this API's message).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

  app.post(
    '/admin/v1/lots',
    {
      onRequest: app.authenticateOperator,
      bodyLimit: ADMIN_LOTS_BODY_LIMIT,
      schema: {
        tags: ['Admin'],
        security: [{ operatorToken: [] }],
        summary: 'Load auction lots (NDJSON)',
        description:
          'For the operator\'s scrapers and partners, not for customers: authenticate with an operator token (`vh_op_...`, made with `vinhistory operator-tokens create`) in the Authorization header, bare or as `Bearer`; a customer API token answers 401.\n\n' +
          'The body is NDJSON (`Content-Type: application/x-ndjson`), one record per line: canonical Lot objects, or auctionsapi vehicle records with their lots (told apart by their fields); gzip is recognised by content. ' +
          `It is streamed into the importer (up to ${ADMIN_LOTS_BODY_LIMIT / 1024 ** 3} GiB) with the rules of \`vinhistory import\` (docs/import-formats.md): each lot is upserted by (auction, lot_id), a field left null keeps the stored value, and a record that is not a valid lot is skipped and listed with its line and reason while the others load.`,
        operationId: 'adminImportLots',
        consumes: [...NDJSON_TYPES],
        body: LotsBodySchema,
        response: {
          200: Type.Ref(AdminImportResultSchema, { description: 'The upload was read to its end: what was stored and what was skipped.' }),
          400: errorRef('BAD_REQUEST', 'The body stopped before its end (the connection broke); the lots before the break are stored, as the message says.'),
          401: errorRef(
            'UNAUTHENTICATED', 'No operator token, or an unknown or revoked one (a customer token is not an operator token). Body is exactly {"message":"Unauthenticated."}.',
            wwwAuthenticateHeader('vinhistory-admin'),
          ),
          413: errorRef('PAYLOAD_TOO_LARGE', `The body is larger than ${ADMIN_LOTS_BODY_LIMIT} bytes. When that is only found out while reading (no Content-Length), the lots before are stored and the message says how many.`),
          415: errorRef('UNSUPPORTED_MEDIA_TYPE', 'The Content-Type is not application/x-ndjson.'),
          422: errorRef('VALIDATION_FAILED', 'The body is empty, or is not NDJSON at all (an HTML page, a CSV file).'),
          '5xx': errorRef('INTERNAL', 'A fault of the service (the database stopped, for one). Lots of the batches stored before stay stored.'),
        },
      },
      // The body schema documents the stream; it is not a value to validate.
      validatorCompiler: () => () => true,
    },
    async (request) => {
      const body = request.body;
      const contentType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (body === undefined) throw emptyBody();
      if (!NDJSON_TYPES.has(contentType)) {
        throw new ApiError(
          'UNSUPPORTED_MEDIA_TYPE',
          `Unsupported Content-Type${contentType ? ` ${contentType}` : ''}: send the lots as NDJSON, one JSON object per line, with Content-Type: application/x-ndjson.`,
        );
      }
      const declared = Number(request.headers['content-length']);
      if (Number.isFinite(declared) && declared > ADMIN_LOTS_BODY_LIMIT) throw tooLarge();

      const limited = body.pipe(limitBytes(ADMIN_LOTS_BODY_LIMIT));
      body.on('error', (error) => limited.destroy(error));
      const rejected: { line: number; reason: string }[] = [];
      let notListed = 0;
      const onRejected = ({ line, reason }: RejectedRecord) => {
        if (rejected.length < REJECTED_LISTED) rejected.push({ line, reason });
        else notListed++;
      };
      try {
        const { format, summary } = await app.services.ingest.importUpload(limited, { batchSize: BATCH_SIZE, onRejected, source: adminSource(request.operator?.name) });
        request.log.info({ operator: request.operator?.name, format, ...summary }, 'lots imported');
        await app.services.operations.record(requestActor(request.operator), 'lots.import', 'lots', { format, ...summary });
        return { format, ...summary, rejected, rejected_not_listed: notListed };
      } catch (error) {
        if (!(error instanceof IngestError)) throw error;
        throw failureAnswer(error, request.log, request.operator?.name);
      }
    },
  );
};

/** The answer to an upload the importer could not take whole. */
function failureAnswer(error: IngestError, log: FastifyBaseLogger, operator: string | undefined): unknown {
  switch (error.kind) {
    case 'empty':
      return emptyBody();
    case 'refused': {
      const message = `The request body ${error.message}.`;
      return new ApiError('VALIDATION_FAILED', message, { errors: { body: [message] } });
    }
    case 'unreadable':
      // The body broke before a record of it was read: over the limit, or a fault.
      return error.cause instanceof BodyTooLargeError ? tooLarge() : error.cause;
    case 'cut-short': {
      const { summary } = error;
      const stored = `${summary.inserted + summary.updated + summary.unchanged} lots before line ${error.afterLine + 1} were stored (${summary.inserted} inserted, ${summary.updated} updated, ${summary.unchanged} unchanged, ${summary.skipped} skipped)`;
      log.warn({ operator, err: error.cause, ...summary }, 'lot upload stopped early');
      if (error.cause instanceof BodyTooLargeError) {
        return new ApiError('PAYLOAD_TOO_LARGE', `The request body is larger than the limit of ${ADMIN_LOTS_BODY_LIMIT} bytes; the ${stored}. Send the rest in another request.`);
      }
      return new ApiError('BAD_REQUEST', `The request body stopped before its end (${error.message}); the ${stored}. Send the rest again: lots already stored count as unchanged.`);
    }
    case 'interrupted':
      // An upload is never asked to stop.
      return error;
  }
}

function emptyBody(): ApiError {
  const message = 'The request body is empty: send lots as NDJSON, one JSON object per line.';
  return new ApiError('VALIDATION_FAILED', message, { errors: { body: [message] } });
}

function tooLarge(): ApiError {
  return new ApiError('PAYLOAD_TOO_LARGE', `The request body is larger than the limit of ${ADMIN_LOTS_BODY_LIMIT} bytes; split the lots over several requests.`);
}

export default adminLotsRoutes;

/** The source a pushed lot's history names (lot history): the operator token that pushed it. */
export function adminSource(operatorTokenName: string | undefined): string {
  return `admin-api:${operatorTokenName ?? 'unknown'}`;
}
