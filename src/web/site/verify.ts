import fastifyMultipart from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { retryAfter } from '../../limits/limit-headers.ts';
import { MAX_VERIFY_LINK_LENGTH, MAX_VERIFY_PDF_BYTES, type VerificationOutcome } from '../../verification/report-verification.ts';
import { formatAuction, formatDate, formatMiles, formatMoney } from '../format.ts';

type Errors = Partial<Record<'link' | 'pdf' | 'form', string>>;

const MIB = 1024 * 1024;

/** The verdict and what the signed report said, for views/verify.eta. */
function resultOf(outcome: VerificationOutcome) {
  if (outcome.kind !== 'genuine' && outcome.kind !== 'changed') return null;
  const { signed, report } = outcome;
  const lots = (report.lots).map((lot) => ({
    title: `${formatAuction(lot.auction)} lot ${lot.lot_id}`,
    name: lot.name,
    saleDate: lot.sale_date ? formatDate(lot.sale_date) : 'no sale date',
    price: lot.price === null ? 'no price' : formatMoney(lot.price),
    odometer: lot.odometer === null ? 'no reading' : formatMiles(lot.odometer),
    damage: lot.primary_damage ?? 'not stated',
    document: lot.document ?? 'not stated',
  }));
  return {
    genuine: outcome.kind === 'genuine',
    via: outcome.kind === 'genuine' ? outcome.via : 'pdf',
    claimedDigest: outcome.kind === 'changed' ? outcome.claimedDigest : null,
    vin: report.vin,
    madeAt: report.origin_timestamp,
    reportUrl: report.report_url,
    digest: signed.digest,
    keyId: signed.keyId,
    issuer: signed.issuer,
    issuedAt: signed.issuedAt,
    reportId: signed.reportId,
    lots,
  };
}

/** Why a check found nothing to show, in words for the person who asked (null: there is a result). */
function refusalOf(outcome: VerificationOutcome): { field: keyof Errors; message: string; status: number } | null {
  switch (outcome.kind) {
    case 'not_a_report_link':
      return { field: 'link', message: 'That is not a report link: paste the whole address of a report page, ending in /report/ and a long id.', status: 422 };
    case 'not_a_pdf':
      return { field: 'pdf', message: 'That file is not a PDF. Upload the report PDF as you received it.', status: 422 };
    case 'no_report_in_pdf':
      return { field: 'pdf', message: 'This PDF names no report of ours: it was not made by this service, or its document information was removed.', status: 422 };
    case 'unknown_report':
      return { field: 'form', message: `We have no report ${outcome.reportId}. A report of ours is never deleted while its account exists: this one is not genuine, or its link was mistyped.`, status: 404 };
    case 'signature_invalid':
      return { field: 'form', message: `The stored signature of report ${outcome.reportId} does not verify: do not rely on it, and write to us.`, status: 409 };
    default:
      return null;
  }
}

/**
 * The public verification page (docs/reports.md): anyone pastes a report link (ours or a reseller's)
 * or uploads a report PDF, and sees whether the report is one this service signed and what it said.
 * Checks share the per-address guard of the signed JSON and the keys.
 */
const verifyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services } = app;
  const guard = services.guards.reportVerifications;

  await app.register(fastifyMultipart, {
    attachFieldsToBody: 'keyValues',
    limits: { fileSize: MAX_VERIFY_PDF_BYTES, files: 1, fields: 3, fieldSize: MAX_VERIFY_LINK_LENGTH + 64, parts: 4 },
  });

  const render = (reply: FastifyReply, data: { link?: string; errors?: Errors; outcome?: VerificationOutcome | null }, status = 200) =>
    reply.page(
      'verify',
      {
        title: 'Verify a report',
        section: 'verify',
        link: data.link ?? '',
        errors: data.errors ?? {},
        result: data.outcome ? resultOf(data.outcome) : null,
        maxMiB: MAX_VERIFY_PDF_BYTES / MIB,
        maxLink: MAX_VERIFY_LINK_LENGTH,
      },
      status,
    );

  async function answer(request: FastifyRequest, reply: FastifyReply, link: string, check: () => Promise<VerificationOutcome>) {
    const decision = await guard.consume(request.ip);
    if (!decision.allowed) {
      reply.header('retry-after', retryAfter(decision.resetMs));
      return render(reply, { link, errors: { form: `Too many checks at once: at most ${guard.perSecond} a second. Try again in a moment.` } }, 429);
    }
    const outcome = await check();
    const refusal = refusalOf(outcome);
    if (refusal) return render(reply, { link, errors: { [refusal.field]: refusal.message } }, refusal.status);
    return render(reply, { link, outcome });
  }

  // Too large an upload is answered on this page, saying the bound.
  app.setErrorHandler(async (error: FastifyError, _request, reply) => {
    if (error.code !== 'FST_REQ_FILE_TOO_LARGE' && error.statusCode !== 413) throw error;
    return render(reply, { errors: { pdf: `That file is larger than ${MAX_VERIFY_PDF_BYTES / MIB} MiB; a report PDF is far smaller. Upload the report PDF as you received it.` } }, 413);
  });

  app.get('/verify', { schema: { hide: true, querystring: Type.Object({ report: Type.Optional(Type.String({ maxLength: MAX_VERIFY_LINK_LENGTH })) }) } }, async (request, reply) => {
    const { report } = request.query;
    if (report === undefined || report.trim() === '') return render(reply, {});
    return answer(request, reply, report, () => services.verification.verifyLink(report));
  });

  app.post('/verify', { schema: { hide: true }, bodyLimit: MAX_VERIFY_PDF_BYTES + MIB }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const link = typeof body.link === 'string' ? body.link.trim() : '';
    const pdf = Buffer.isBuffer(body.pdf) && body.pdf.length > 0 ? body.pdf : null;
    if (pdf && link !== '') return render(reply, { link, errors: { form: 'Paste a link or upload a PDF, not both: one report is checked at a time.' } }, 422);
    if (pdf) return answer(request, reply, '', () => services.verification.verifyPdf(pdf));
    if (link === '') return render(reply, { errors: { link: 'Paste a report link, or upload a report PDF below.' } }, 422);
    if (link.length > MAX_VERIFY_LINK_LENGTH) return render(reply, { link: link.slice(0, MAX_VERIFY_LINK_LENGTH), errors: { link: `That is longer than any report link (${MAX_VERIFY_LINK_LENGTH} characters at most).` } }, 422);
    return answer(request, reply, link, () => services.verification.verifyLink(link));
  });
};

export default verifyRoutes;
