import { Readable } from 'node:stream';
import archiver from 'archiver';
import fastifyMultipart from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { batchJson, MAX_BATCH_ITEMS, type BatchItem } from '../../domain/batch.ts';
import { csvHeader, itemLine, itemRows } from '../../batches/batch-results.ts';
import { formatDateTime } from '../format.ts';
import { accountOf } from './current-account.ts';

/** The CSV upload: the API's body limit. */
const UPLOAD_LIMIT = 512 * 1024;
/** The PDFs one ZIP holds at most (each is printed by Chromium when not in the cache). */
export const MAX_ZIP_REPORTS = 200;
/** How often a PDF refused for a busy printer is asked for again, and how long in all. */
const PDF_RETRY_MS = 500;
const PDF_GIVE_UP_MS = 60_000;
const BatchParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

function field(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  return typeof value === 'string' ? value : '';
}

/**
 * Batches from the account page (docs/api.md, "Batches"): upload a CSV with a `vin` column as the
 * searches of one of the account's tokens, watch the progress (account.js polls the progress
 * route), download the results as NDJSON or CSV and a ZIP of the found reports' PDFs. The API's
 * rules through the same service.
 */
const batchesPageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services } = app;
  await app.register(fastifyMultipart, { attachFieldsToBody: 'keyValues', limits: { fileSize: UPLOAD_LIMIT, files: 1, fields: 4, fieldSize: 1024, parts: 6 } });

  async function render(request: FastifyRequest, reply: FastifyReply, extra: { error?: string | null; notice?: string | null; cursor?: string | undefined }, status = 200) {
    const account = accountOf(request);
    const [listed, tokens] = await Promise.all([services.batches.list(account.id, { limit: 25, cursor: extra.cursor }), services.apiTokens.list(account.id)]);
    const page = listed.kind === 'page' ? listed.page : { items: [], nextCursor: null };
    const now = Date.now();
    return reply.page(
      'account/batches',
      {
        title: 'Batches',
        section: 'account',
        tab: 'batches',
        tokens: tokens
          .filter((token) => token.revokedAt === null && (token.expiresAt === null || Date.parse(token.expiresAt) > now))
          .map((token) => ({ id: token.id, label: `${token.name} (${token.displayPrefix}…)${token.kind === 'test' ? ' · sandbox' : ''}` })),
        batches: page.items.map((batch) => ({
          ...batchJson(batch),
          created: formatDateTime(batch.createdAt),
          countsText: Object.entries(batch.counts)
            .map(([code, n]) => `${n} × ${code}`)
            .join(', '),
        })),
        nextCursor: page.nextCursor,
        maxItems: MAX_BATCH_ITEMS,
        maxZip: MAX_ZIP_REPORTS,
        uploadKiB: UPLOAD_LIMIT / 1024,
        error: extra.error ?? null,
        notice: extra.notice ?? null,
      },
      status,
    );
  }

  app.get('/batches', { schema: { hide: true, querystring: Type.Object({ cursor: Type.Optional(Type.String({ maxLength: 200 })), done: Type.Optional(Type.String({ maxLength: 40 })) }) } }, async (request, reply) =>
    render(request, reply, { cursor: request.query.cursor, notice: request.query.done === 'created' ? 'The batch is queued: its progress shows below.' : null }),
  );

  app.post('/batches', { schema: { hide: true } }, async (request, reply) => {
    const account = accountOf(request);
    const body = (request.body ?? {}) as Record<string, unknown>;
    const upload = body.csv;
    if (!Buffer.isBuffer(upload) || upload.length === 0) return render(request, reply, { error: 'Choose a CSV file with a vin column.' }, 422);
    const outcome = await services.batches.createForToken(account.id, field(body, 'token'), { kind: 'csv', text: upload.toString('utf8') });
    switch (outcome.kind) {
      case 'no_token':
        return render(request, reply, { error: 'Choose one of your API tokens: the batch’s searches are that token’s.' }, 422);
      case 'subscription_required':
        return render(request, reply, { error: 'You have no plan in force: choose a plan first, or use a sandbox token.' }, 402);
      case 'invalid':
        return render(request, reply, { error: outcome.messages[0] ?? 'The CSV cannot be used.' }, 422);
      case 'idempotency_conflict':
      case 'replayed':
      case 'created':
        return reply.seeOther('/account/batches?done=created');
    }
  });

  const ownBatch = (request: FastifyRequest, id: string) => services.batches.find(accountOf(request).id, id);

  // What account.js polls while a batch runs.
  app.get('/batches/:id/progress', { schema: { hide: true, params: BatchParams } }, async (request, reply) => {
    const batch = await ownBatch(request, request.params.id);
    if (!batch) return app.renderNotFoundPage(request, reply);
    return reply.header('cache-control', 'no-store').send(batchJson(batch));
  });

  app.get('/batches/:id/results.:format', { schema: { hide: true, params: Type.Object({ id: Type.String({ maxLength: 64 }), format: Type.Union([Type.Literal('ndjson'), Type.Literal('csv')]) }) } }, async (request, reply) => {
    const batch = await services.batches.find(accountOf(request).id, request.params.id);
    if (!batch) return app.renderNotFoundPage(request, reply);
    const csv = request.params.format === 'csv';
    const lines = async function* (items: AsyncIterable<BatchItem>): AsyncGenerator<string> {
      if (csv) yield csvHeader();
      for await (const item of items) yield csv ? itemRows(item) : itemLine(item);
    };
    return reply
      .header('content-type', csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
      .header('content-disposition', `attachment; filename="${batch.id}.${request.params.format}"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(lines(services.batches.items(batch.id))));
  });

  /**
   * The found reports' PDFs in one ZIP, streamed as each is printed (or read from the PDF cache):
   * each through the report page's own PDF route, so that it is the PDF a reader gets there.
   */
  app.get('/batches/:id/reports.zip', { schema: { hide: true, params: BatchParams } }, async (request, reply) => {
    const batch = await ownBatch(request, request.params.id);
    if (!batch) return app.renderNotFoundPage(request, reply);
    const found = (await services.batches.reportIds(batch.id)).slice(0, MAX_ZIP_REPORTS);
    // The account's report language, on the paper of the reader's language (as the report page chooses).
    const lang = (await services.accounts.defaultLanguage(accountOf(request).id)) ?? 'en';
    const paper = /^en-(us|ca)\b/i.test(request.headers['accept-language'] ?? '') ? 'letter' : 'a4';
    const zip = archiver('zip', { zlib: { level: 1 } });
    const log = request.log;
    const fill = async () => {
      for (const { index, reportId } of found) {
        const pdf = await printed(reportId);
        const name = `${String(index).padStart(4, '0')}-${reportId}`;
        if (typeof pdf !== 'number') zip.append(pdf, { name: `${name}.pdf` });
        else zip.append(`The PDF of report ${reportId} could not be printed now (status ${pdf}); open ${services.config.publicBaseUrl}/report/${reportId}.pdf\n`, { name: `${name}.txt` });
      }
      await zip.finalize();
    };
    /** The PDF, or the status that refused it. */
    const printed = async (reportId: string): Promise<Buffer | number> => {
      let status = 503;
      for (const giveUpAt = Date.now() + PDF_GIVE_UP_MS; Date.now() < giveUpAt; ) {
        const res = await app.inject({ method: 'GET', url: `/report/${reportId}.pdf?lang=${lang}&paper=${paper}` });
        if (res.statusCode === 200) return res.rawPayload;
        status = res.statusCode;
        if (status !== 429 && status !== 503) return status;
        await new Promise((resolve) => setTimeout(resolve, PDF_RETRY_MS));
      }
      return status;
    };
    fill().catch((error: unknown) => {
      log.warn({ err: error, batch: batch.id }, 'the ZIP of a batch\'s PDFs failed');
      zip.abort();
    });
    return reply
      .header('content-type', 'application/zip')
      .header('content-disposition', `attachment; filename="${batch.id}-reports.zip"`)
      .header('cache-control', 'no-store')
      .send(zip);
  });
};

export default batchesPageRoutes;
