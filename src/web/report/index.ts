import { createReadStream } from 'node:fs';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StoredReport } from '../../domain/report.ts';
import { isReportLanguage, type ReportLanguage } from '../../domain/report-language.ts';
import { assetHref, readStylesheet, STYLESHEET } from '../assets.ts';
import { basePathOf } from '../view.ts';
import { SESSION_COOKIE } from '../web-session.ts';
import { pageHelpers } from '../site/present.ts';
import { retryAfter } from '../../limits/limit-headers.ts';
import { accentCss, allowStyle, BRANDED_FONTS_CSS, brandedAssets, brandView, REPORT_SCRIPT } from './branding.ts';
import { fontFaceCss, fontFile, inlineFontFaceCss, REPORT_FONT_STACK } from './fonts.ts';
import { translatorFor } from './i18n.ts';
import { chooseLanguage, choosePaper } from './language.ts';
import { fetchPhotos } from '../../pdf/pdf-photos.ts';
import { pageFooterCss, pageQrCss, PdfUnavailableError, type Paper } from '../../pdf/pdf-renderer.ts';
import type { SignedReport } from '../../verification/report-verification.ts';
import { verificationView } from './verification.ts';
import { isWebUrl, OUR_BRAND, presentReport, type Brand } from './present.ts';
import { SALE_COMPARISON_MONTHS, saleKey, type ReportMarket } from './market.ts';

/** Photos a PDF carries per lot: enough to see the damage; the page links every one. */
export const PDF_PHOTOS_PER_LOT = 8;

/** Sold lots of a report compared with their market, newest first: one market query each. */
export const MARKET_COMPARED_SALES = 10;

/** The market window of the report's section, the API's default. */
const REPORT_MARKET_MONTHS = 12;

const Params = Type.Object({ id: Type.String({ maxLength: 80 }) });
const Query = Type.Object({
  lang: Type.Optional(Type.String({ maxLength: 16 })),
  paper: Type.Optional(Type.String({ maxLength: 16 })),
});

/** A reader logged in to an account (a customer) is not sent the "get reports like this" link. */
function hasSession(request: FastifyRequest): boolean {
  return new RegExp(`(?:^|;\\s*)${SESSION_COOKIE}=`).test(request.headers.cookie ?? '');
}

/**
 * The shareable report page and its PDF: the snapshot a search stored, to anyone holding the link,
 * in the reader's language (`?lang=`, the account's default, Accept-Language, English).
 */
const reportRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services } = app;
  const { config } = services;
  const basePath = basePathOf(config.publicBaseUrl);
  const helpers = pageHelpers(basePath);

  const fontsCss = fontFaceCss((face) => `${basePath}/assets/fonts/${face.file}`);
  const fontsHref = assetHref(basePath, 'report-fonts.css', fontsCss);
  const scriptHref = assetHref(basePath, 'report.js');
  const fontMaxAge = config.isProduction ? 30 * 24 * 60 * 60 : 0;

  // A branded page may be read through the reseller's proxy, which forwards /report/* only: its
  // stylesheet, script and fonts are served under /report/assets/ too and linked relatively.
  const branded = brandedAssets('./');

  // The PDF's stylesheet carries the fonts inside it (the printing browser fetches nothing): only
  // the scripts of its language, inlined once. The stylesheet is read once in production; outside
  // it, again for each PDF, so that an edited stylesheet shows.
  const SCRIPT_FAMILY: Partial<Record<ReportLanguage, string>> = { ka: 'Noto Sans Georgian', ar: 'Noto Sans Arabic' };
  const pdfFonts = new Map<ReportLanguage, string>();
  const fontsFor = (language: ReportLanguage) => {
    let fonts = pdfFonts.get(language);
    if (fonts === undefined) {
      const family = SCRIPT_FAMILY[language];
      const cyrillic = language === 'uk' || language === 'ru';
      fonts = inlineFontFaceCss((face) => face.family === family || (face.family === 'Noto Sans' && (cyrillic || !face.file.includes('cyrillic'))));
      pdfFonts.set(language, fonts);
    }
    return fonts;
  };
  let stylesheet: string | null = null;
  const pdfStylesheet = () => (stylesheet !== null && config.isProduction ? stylesheet : (stylesheet = readStylesheet()));

  app.get('/assets/report-fonts.css', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', `public, max-age=${fontMaxAge}`).send(fontsCss),
  );

  app.get('/report/assets/report-fonts.css', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', `public, max-age=${fontMaxAge}`).send(BRANDED_FONTS_CSS),
  );
  app.get(`/report/assets/${STYLESHEET}`, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', `public, max-age=${fontMaxAge}`).send(pdfStylesheet()),
  );
  app.get('/report/assets/report.js', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', `public, max-age=${fontMaxAge}`).send(REPORT_SCRIPT),
  );
  app.get('/report/assets/fonts/:file', { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 100 }) }) } }, async (request, reply) => {
    const face = fontFile(request.params.file);
    if (!face) return app.renderNotFoundPage(request, reply);
    return reply.type('font/woff2').header('cache-control', `public, max-age=${fontMaxAge}`).send(createReadStream(face.path));
  });

  // A brand's logo: the PNG made of the upload, at the hash of its bytes, so it never changes.
  app.get('/report/brand/:file', { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 80 }) }) } }, async (request, reply) => {
    const match = /^([0-9a-f]{64})\.png$/.exec(request.params.file);
    const png = match ? await services.brands.logo(match[1]!) : null;
    if (!png) return app.renderNotFoundPage(request, reply);
    return reply
      .type('image/png')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .send(png);
  });

  app.get('/assets/fonts/:file', { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 100 }) }) } }, async (request, reply) => {
    const face = fontFile(request.params.file);
    if (!face) return app.renderNotFoundPage(request, reply);
    return reply.type('font/woff2').header('cache-control', `public, max-age=${fontMaxAge}`).send(createReadStream(face.path));
  });

  type Query = { lang?: string | undefined; paper?: string | undefined };

  /**
   * What similar cars sold for, as of the report's time (the contract's snapshot rule): the
   * vehicle's market in the months before the report was made, and each sold lot's in the months
   * before its sale. The section is a companion of the report: a failure to compute it is logged and
   * the report shown without it.
   */
  async function marketOf(request: FastifyRequest, report: StoredReport): Promise<ReportMarket | undefined> {
    const asOf = new Date(report.createdAt);
    const subject = { kind: 'vin', vin: report.vin } as const;
    const sold = report.lots
      .filter((lot) => lot.sale_date !== null && lot.price !== null && lot.price > 0 && Date.parse(lot.sale_date) <= asOf.getTime())
      .slice(0, MARKET_COMPARED_SALES);
    try {
      const [vehicle, ...sales] = await Promise.all([
        services.market.valueFor(subject, { primaryDamage: null, months: REPORT_MARKET_MONTHS, asOf }),
        ...sold.map((lot) => services.market.valueFor(subject, { primaryDamage: null, months: SALE_COMPARISON_MONTHS, asOf: new Date(lot.sale_date!) })),
      ]);
      return {
        vehicle: vehicle ?? null,
        sales: new Map(sold.flatMap((lot, index) => (sales[index] ? [[saleKey(lot), sales[index]]] : []))),
      };
    } catch (error) {
      request.log.error({ err: error, reportId: report.id }, 'report page: the market section could not be computed');
      return undefined;
    }
  }

  async function languageOf(request: FastifyRequest, query: Query, report: StoredReport): Promise<ReportLanguage> {
    const lang = query.lang;
    // The account is read only when the link does not decide.
    const accountDefault = isReportLanguage(lang) ? null : ((await services.accounts.defaultLanguage(report.accountId)) ?? null);
    return chooseLanguage({ query: lang, accountDefault, acceptLanguage: request.headers['accept-language'] });
  }

  async function sendPage(request: FastifyRequest, query: Query, reply: FastifyReply, report: StoredReport) {
    const [language, theirs, market, histories] = await Promise.all([
      languageOf(request, query, report),
      services.brands.forReport(report),
      marketOf(request, report),
      services.history.forReport(report),
    ]);
    const brand = theirs ? brandView(theirs, (hash) => `./brand/${hash}.png`) : OUR_BRAND;
    // Photos archived since the snapshot was taken show from the archive (thumbnails opening the full image).
    // A branded page's copies come through the reseller's proxy, under the report path, relatively.
    const links = await services.media.photoLinks(report.lots.flatMap((lot) => lot.images), ...(theirs ? ['./media/'] : []));
    const view = presentReport(report, { language, brand, histories, photoLinks: (url) => links.get(url) ?? { src: url, href: url }, ...(market ? { market } : {}) });
    const accent = accentCss(brand);
    if (accent) allowStyle(reply, accent);
    // Signed at its first need (docs/reports.md); a branded page links only what comes through the reseller's proxy.
    const signed = await services.verification.signed(report.id);
    const verification = signed
      ? await verificationView(services.verification, signed, language, theirs ? { verifyHref: null, jsonHref: `./${report.id}.json` } : { verifyHref: `${basePath}/verify?report=${report.id}`, jsonHref: `${basePath}/report/${report.id}.json` })
      : null;
    reply
      .header('x-robots-tag', 'noindex, nofollow')
      .header('cache-control', 'private, max-age=300')
      .header('vary', 'accept-language, cookie')
      .header('content-language', language);
    return reply.view('report', {
      report: view,
      // A sandbox token's report shows test data: the page says so, whoever opens the link.
      testReport: report.sandbox === true,
      pdf: null,
      ...(theirs ? branded : { fontsHref, scriptHref }),
      accentCss: accent,
      pdfHref: theirs ? `./${report.id}.pdf?lang=${language}` : `${basePath}/report/${report.id}.pdf?lang=${language}`,
      shareUrl: `${theirs?.reportBaseUrl ?? config.publicBaseUrl}/report/${report.id}?lang=${language}`,
      getReportsHref: brand.ours && !hasSession(request) ? `${basePath}/` : null,
      verification,
    });
  }

  async function sendPdf(request: FastifyRequest, query: Query, reply: FastifyReply, report: StoredReport) {
    const { lang, paper } = query;
    const theirs = await services.brands.forReport(report);
    // The address of a PDF names its language and paper, so that the file at an address never
    // changes and may be kept for good; an address without them is sent on to the full one.
    if (!isReportLanguage(lang) || (paper !== 'a4' && paper !== 'letter')) {
      const language = await languageOf(request, query, report);
      const chosen = choosePaper(paper, request.headers['accept-language']);
      reply.header('cache-control', 'no-store').header('vary', 'accept-language');
      // Relative for a branded report, so that the redirect stays on the reseller's address behind its proxy.
      return reply.redirect(`${theirs ? '.' : `${basePath}/report`}/${report.id}.pdf?lang=${language}&paper=${chosen}`, 302);
    }
    // The printing browser fetches nothing: the logo travels inside the page.
    const logo = theirs?.logoHash ? await services.brands.logo(theirs.logoHash) : null;
    const brand = theirs ? brandView(theirs, () => (logo ? `data:image/png;base64,${logo.toString('base64')}` : '')) : OUR_BRAND;
    // The brand is part of the cached file's key: a changed brand prints a new PDF.
    const brandKey = theirs ? JSON.stringify([theirs.name, theirs.logoHash, theirs.accent, theirs.contact]) : JSON.stringify(brand);
    const signed = await services.verification.signed(report.id);
    try {
      const outcome = await services.pdfCache.getOrPrint(
        // The digest is part of the key too: a PDF printed before reports carried their QR code is printed again.
        { reportId: report.id, language: lang, paper, brand: signed ? `${brandKey}\n${signed.digest}` : brandKey },
        async () => printPdf(report, lang, paper, brand, await marketOf(request, report), signed),
        async () => {
          const decision = await services.guards.pdfPrints.consume(request.ip);
          return decision.allowed ? { allowed: true } : { allowed: false, retryAfterMs: decision.resetMs };
        },
      );
      if (outcome.kind !== 'pdf') {
        const busy = outcome.kind === 'busy';
        reply.header('retry-after', busy ? String(outcome.retryAfterSeconds) : retryAfter(outcome.retryAfterMs)).header('cache-control', 'no-store');
        const heading = busy ? 'Too many PDFs are being printed right now' : 'Too many PDFs asked for at once';
        return reply.code(busy ? 503 : 429).view('error', {
          ...helpers,
          title: heading,
          heading,
          message: busy
            ? 'Try again in a few seconds. The report page itself works: open it without .pdf and print it from your browser.'
            : `At most ${services.guards.pdfPrints.perSecond} new PDFs a second are printed for one reader. Try again in a moment; a PDF printed once opens at once.`,
        });
      }
      const { pdf } = outcome;
      return reply
        .type('application/pdf')
        .header('cache-control', 'private, max-age=31536000, immutable')
        .header('content-disposition', `inline; filename="report-${report.vin}-${lang}.pdf"`)
        .header('x-robots-tag', 'noindex, nofollow')
        .header('content-language', lang)
        .send(pdf);
    } catch (error) {
      if (!(error instanceof PdfUnavailableError)) throw error;
      request.log.error({ browserPath: error.browserPath }, 'report PDF: no browser to print with (PDF_BROWSER_PATH)');
      reply.header('retry-after', '3600').header('cache-control', 'no-store');
      const heading = 'The PDF cannot be made right now';
      return reply.code(503).view('error', {
        ...helpers,
        title: heading,
        heading,
        message: 'This service cannot print PDFs at the moment. The report page itself works: open it without .pdf and print it from your browser.',
      });
    }
  }

  async function printPdf(
    report: StoredReport,
    language: ReportLanguage,
    paper: Paper,
    brand: Brand,
    market: ReportMarket | undefined,
    signed: SignedReport | undefined,
  ): Promise<Buffer> {
    const step = services.metrics.pdfSteps.startTimer({ step: 'photos' });
    const urls = report.lots.flatMap((lot) => lot.images.filter(isWebUrl).slice(0, PDF_PHOTOS_PER_LOT));
    const photos = await fetchPhotos(services.outbound, urls, { budgetMs: config.pdf.photoBudgetMs });
    step();
    const htmlStep = services.metrics.pdfSteps.startTimer({ step: 'html' });
    const histories = await services.history.forReport(report);
    const view = presentReport(report, { language, brand, histories, photoSource: (url) => photos.get(url) ?? null, maxPhotosPerLot: PDF_PHOTOS_PER_LOT, ...(market ? { market } : {}) });
    const accent = accentCss(brand);
    const t = translatorFor(language);
    const verification = signed ? await verificationView(services.verification, signed, language, { verifyHref: null, jsonHref: '' }, 'print') : null;
    const footer =
      [brand.name, ...(brand.contact ? [brand.contact] : []), t.t('pdf.made', { id: report.id, time: t.formatDateTime(report.createdAt) }), t.t('pdf.page', { page: '{page}', pages: '{pages}' })].join(' · ') +
      // Every page carries the report's QR code and, under the footer's line, the digest of its signed payload (docs/reports.md).
      (verification ? `\n${verification.text.digest} ${verification.digest}` : '');
    const qrCss = verification ? pageQrCss(verification.qrSvg, t.dir) : '';
    const css = `${fontsFor(language)}\n${pdfStylesheet()}\n${pageFooterCss(footer, t.dir, REPORT_FONT_STACK)}\n${qrCss}`;
    const html = await app.view('report', { report: view, testReport: report.sandbox === true, pdf: { css }, accentCss: accent, getReportsHref: null, verification });
    htmlStep();
    const pdf = await services.pdfRenderer.print(html, { paper });
    // The report's id, address and digest in the document information, where /verify finds them.
    return signed ? services.verification.stampPdf(pdf, signed) : pdf;
  }

  app.get('/report/:id', { schema: { hide: true, params: Params, querystring: Query } }, async (request, reply) => {
    const { id } = request.params;
    const isPdf = id.endsWith('.pdf');
    const report = await services.reports.find(isPdf ? id.slice(0, -'.pdf'.length) : id);
    if (!report) return app.renderNotFoundPage(request, reply);
    return isPdf ? sendPdf(request, request.query, reply, report) : sendPage(request, request.query, reply, report);
  });
};

export default reportRoutes;
