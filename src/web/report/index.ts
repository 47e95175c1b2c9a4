import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StoredReport } from '../../domain/report.ts';
import { isReportLanguage, type ReportLanguage } from '../../domain/report-language.ts';
import { assetHref, readStylesheet } from '../assets.ts';
import { basePathOf } from '../plugins/view.ts';
import { SESSION_COOKIE } from '../plugins/web-session.ts';
import { pageHelpers } from '../site/present.ts';
import { fontFaceCss, fontFile, inlineFontFaceCss, type FontFace } from './fonts.ts';
import { translatorFor } from './i18n.ts';
import { chooseLanguage, choosePaper } from './language.ts';
import { fetchPhotos } from './pdf-photos.ts';
import { PdfUnavailableError, type Paper } from './pdf-renderer.ts';
import { isWebUrl, OUR_BRAND, presentReport, type Brand } from './present.ts';

/** Photos a PDF carries per lot: enough to see the damage; the page links every one. */
export const PDF_PHOTOS_PER_LOT = 8;

const Params = Type.Object({ id: Type.String({ maxLength: 80 }) });
const Query = Type.Object({
  lang: Type.Optional(Type.String({ maxLength: 16 })),
  paper: Type.Optional(Type.String({ maxLength: 16 })),
});

/** A brand's accent as a stylesheet rule, when it is a plain #rrggbb colour (nothing else reaches CSS). */
function accentCss(brand: Brand): string | null {
  if (brand.accent === null || !/^#[0-9a-fA-F]{6}$/.test(brand.accent)) return null;
  return `:root{--accent:${brand.accent};--accent-strong:${brand.accent}}`;
}

/**
 * Lets one inline <style> through the page's CSP by its hash (style-src stays 'self' otherwise):
 * a brand's accent colour is the only style a report writes inline.
 */
function allowStyle(reply: FastifyReply, css: string): void {
  const csp = reply.getHeader('content-security-policy');
  if (typeof csp !== 'string') return;
  const hash = createHash('sha256').update(css).digest('base64');
  reply.header('content-security-policy', csp.replace("style-src 'self'", `style-src 'self' 'sha256-${hash}'`));
}

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

  // The PDF's stylesheet carries the fonts inside it (the printing browser fetches nothing): only
  // the scripts of its language, inlined once. The stylesheet is read once in production; outside
  // it, again for each PDF, so that an edited stylesheet shows.
  const SCRIPT_FAMILY: Partial<Record<ReportLanguage, string>> = { ka: 'Noto Sans Georgian', ar: 'Noto Sans Arabic' };
  const pdfFonts = new Map<ReportLanguage, { page: string; footer: string }>();
  const fontsFor = (language: ReportLanguage) => {
    let fonts = pdfFonts.get(language);
    if (!fonts) {
      const family = SCRIPT_FAMILY[language];
      const cyrillic = language === 'uk' || language === 'ru';
      const wanted = (face: FontFace) =>
        face.family === family || (face.family === 'Noto Sans' && (cyrillic || !face.file.includes('cyrillic')));
      fonts = { page: inlineFontFaceCss(wanted), footer: inlineFontFaceCss((face) => face.weight === '400' && wanted(face)) };
      pdfFonts.set(language, fonts);
    }
    return fonts;
  };
  let stylesheet: string | null = null;
  const pdfStylesheet = () => (stylesheet !== null && config.isProduction ? stylesheet : (stylesheet = readStylesheet()));

  app.get('/assets/report-fonts.css', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', `public, max-age=${fontMaxAge}`).send(fontsCss),
  );

  app.get('/assets/fonts/:file', { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 100 }) }) } }, async (request, reply) => {
    const face = fontFile(request.params.file);
    if (!face) return app.renderNotFoundPage(request, reply);
    return reply.type('font/woff2').header('cache-control', `public, max-age=${fontMaxAge}`).send(createReadStream(face.path));
  });

  type Query = { lang?: string | undefined; paper?: string | undefined };

  async function languageOf(request: FastifyRequest, query: Query, report: StoredReport): Promise<ReportLanguage> {
    const lang = query.lang;
    // The account is read only when the link does not decide.
    const accountDefault = isReportLanguage(lang) ? null : ((await services.accounts.defaultLanguage(report.accountId)) ?? null);
    return chooseLanguage({ query: lang, accountDefault, acceptLanguage: request.headers['accept-language'] });
  }

  async function sendPage(request: FastifyRequest, query: Query, reply: FastifyReply, report: StoredReport) {
    const language = await languageOf(request, query, report);
    const brand = OUR_BRAND;
    const view = presentReport(report, { language, brand });
    const accent = accentCss(brand);
    if (accent) allowStyle(reply, accent);
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
      fontsHref,
      scriptHref,
      accentCss: accent,
      pdfHref: `${basePath}/report/${report.id}.pdf?lang=${language}`,
      shareUrl: `${config.publicBaseUrl}/report/${report.id}?lang=${language}`,
      getReportsHref: brand.ours && !hasSession(request) ? `${basePath}/` : null,
    });
  }

  async function sendPdf(request: FastifyRequest, query: Query, reply: FastifyReply, report: StoredReport) {
    const { lang, paper } = query;
    // The address of a PDF names its language and paper, so that the file at an address never
    // changes and may be kept for good; an address without them is sent on to the full one.
    if (!isReportLanguage(lang) || (paper !== 'a4' && paper !== 'letter')) {
      const language = await languageOf(request, query, report);
      const chosen = choosePaper(paper, request.headers['accept-language']);
      reply.header('cache-control', 'no-store').header('vary', 'accept-language');
      return reply.redirect(`${basePath}/report/${report.id}.pdf?lang=${language}&paper=${chosen}`, 302);
    }
    const brand = OUR_BRAND;
    try {
      const { pdf } = await services.pdfCache.getOrPrint({ reportId: report.id, language: lang, paper, brand: JSON.stringify(brand) }, () =>
        printPdf(report, lang, paper as Paper, brand),
      );
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

  async function printPdf(report: StoredReport, language: ReportLanguage, paper: Paper, brand: Brand): Promise<Buffer> {
    const urls = report.lots.flatMap((lot) => lot.images.filter(isWebUrl).slice(0, PDF_PHOTOS_PER_LOT));
    const photos = await fetchPhotos(services.outbound, urls, { budgetMs: config.pdf.photoBudgetMs });
    const view = presentReport(report, { language, brand, photoSource: (url) => photos.get(url) ?? null, maxPhotosPerLot: PDF_PHOTOS_PER_LOT });
    const fonts = fontsFor(language);
    const accent = accentCss(brand);
    const html = await app.view('report', { report: view, testReport: report.sandbox === true, pdf: { css: `${fonts.page}\n${pdfStylesheet()}` }, accentCss: accent, getReportsHref: null });
    const t = translatorFor(language);
    const footer = [brand.name, t.t('pdf.made', { id: report.id, time: t.formatDateTime(report.createdAt) }), t.t('pdf.page', { page: '{page}', pages: '{pages}' })].join(' · ');
    return services.pdfRenderer.print(html, { paper, footer, dir: t.dir, fontCss: fonts.footer });
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
