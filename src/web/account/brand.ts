import { Type } from '@sinclair/typebox';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ACCENT_MIN_CONTRAST, BRAND_LIMITS, type AccountBrand } from '../../domain/brand.ts';
import { REPORT_LANGUAGE_NAMES } from '../../domain/report-language.ts';
import type { StoredReport } from '../../domain/report.ts';
import { isReportLanguage } from '../../domain/report-language.ts';
import type { BrandField } from '../../accounts/brand-service.ts';
import { SANDBOX_CATALOGUE, sandboxLots } from '../../search/sandbox/catalogue.ts';
import { basePathOf } from '../view.ts';
import { accentCss, allowStyle, brandedAssets, brandView } from '../report/branding.ts';
import { presentReport } from '../report/present.ts';
import { accountOf } from './current-account.ts';

/** A file above this is refused by the parser itself (413); below it, the form explains the real limit. */
const UPLOAD_LIMIT = 1024 * 1024;

const NOTICES: Record<string, string> = {
  saved: 'Your brand is saved. Your reports show it from now on.',
  deleted: 'The brand is removed.',
};

/** The vehicle the preview shows: the sandbox's one with every warning sign, so every part of the page is seen. */
const PREVIEW_VIN = SANDBOX_CATALOGUE.find((vehicle) => /every red flag/i.test(vehicle.purpose))?.vin ?? SANDBOX_CATALOGUE[0]!.vin;

interface FormValues {
  name: string;
  accent: string;
  contact: string;
  report_base_url: string;
}

function valuesOf(brand: AccountBrand | undefined): FormValues {
  return { name: brand?.name ?? '', accent: brand?.accent ?? '', contact: brand?.contact ?? '', report_base_url: brand?.reportBaseUrl ?? '' };
}

function field(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  return typeof value === 'string' ? value : '';
}

/**
 * White label: the account's brands (a default and named ones for tokens), their form (display
 * name, logo, accent, contact line, report address), and a preview of a report with the brand.
 * The form is multipart for the logo; the parser is registered in this scope only.
 */
const brandRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services } = app;
  const basePath = basePathOf(services.config.publicBaseUrl);
  const previewAssets = brandedAssets(`${basePath}/report/`);

  await app.register(fastifyMultipart, {
    attachFieldsToBody: 'keyValues',
    limits: { fileSize: UPLOAD_LIMIT, files: 1, fields: 12, fieldSize: 4 * 1024, parts: 14 },
  });

  async function renderBrand(
    request: FastifyRequest,
    reply: FastifyReply,
    extra: { selected?: string; errors?: Partial<Record<BrandField | 'form', string>>; values?: FormValues; notice?: string | null },
    status = 200,
  ) {
    const account = accountOf(request);
    const [brands, language] = await Promise.all([services.brands.list(account.id), services.accounts.defaultLanguage(account.id)]);
    const defaultBrand = brands.find((brand) => brand.isDefault);
    const selectedId = extra.selected ?? defaultBrand?.id ?? 'new-default';
    const brand = brands.find((candidate) => candidate.id === selectedId);
    const isNew = brand === undefined;
    const kind = brand ? (brand.isDefault ? 'default' : 'named') : selectedId === 'new' ? 'named' : 'default';
    return reply.page(
      'account/brand',
      {
        title: 'Brand',
        section: 'account',
        tab: 'brand',
        brands: brands.map((item) => ({ id: item.id, name: item.name, isDefault: item.isDefault, current: item.id === brand?.id })),
        brand: brand ?? null,
        brandId: brand ? brand.id : kind === 'default' ? '' : 'new',
        kind,
        isNew,
        values: extra.values ?? valuesOf(brand),
        errors: extra.errors ?? {},
        notice: extra.notice ?? null,
        logoSrc: brand?.logoHash ? `${basePath}/report/brand/${brand.logoHash}.png` : null,
        previewSrc: brand ? `${basePath}/account/brand/preview?brand=${brand.id}` : null,
        languageName: language ? REPORT_LANGUAGE_NAMES[language] : null,
        limits: { ...BRAND_LIMITS, logoKiB: BRAND_LIMITS.logoBytes / 1024, contrast: ACCENT_MIN_CONTRAST },
        canAddNamed: defaultBrand !== undefined && brands.length - 1 < BRAND_LIMITS.namedBrands,
        httpAllowed: !services.config.isProduction,
      },
      status,
    );
  }

  app.get(
    '/brand',
    { schema: { hide: true, querystring: Type.Object({ brand: Type.Optional(Type.String({ maxLength: 64 })), done: Type.Optional(Type.String({ maxLength: 40 })) }) } },
    async (request, reply) => {
      const { brand, done } = request.query;
      if (brand !== undefined && brand !== 'new') {
        const brands = await services.brands.list(accountOf(request).id);
        if (!brands.some((item) => item.id === brand)) return app.renderNotFoundPage(request, reply);
      }
      return renderBrand(request, reply, { ...(brand === undefined ? {} : { selected: brand }), notice: NOTICES[done ?? ''] ?? null });
    },
  );

  app.post('/brand', { schema: { hide: true } }, async (request, reply) => {
    const account = accountOf(request);
    const body = (request.body ?? {}) as Record<string, unknown>;
    const rawId = field(body, 'brand_id');
    const brandId = rawId === '' ? null : rawId;
    const upload = body.logo;
    const values = { name: field(body, 'name'), accent: field(body, 'accent'), contact: field(body, 'contact'), report_base_url: field(body, 'report_base_url') };
    const outcome = await services.brands.save(account.id, brandId, {
      name: values.name,
      accent: values.accent,
      contact: values.contact,
      reportBaseUrl: values.report_base_url,
      // A form sent without choosing a file carries an empty file part: the stored logo stays.
      logo: Buffer.isBuffer(upload) && upload.length > 0 ? upload : null,
      removeLogo: field(body, 'remove_logo') === '1',
    });
    const selected = brandId ?? undefined;
    if (outcome.kind === 'not-found') return app.renderNotFoundPage(request, reply);
    if (outcome.kind === 'too-many') {
      return renderBrand(request, reply, { ...(selected ? { selected } : {}), values, errors: { form: `An account can have ${outcome.limit} brands besides its default.` } }, 409);
    }
    if (outcome.kind === 'invalid') return renderBrand(request, reply, { ...(selected ? { selected } : {}), values, errors: outcome.errors }, 422);
    return reply.seeOther(`/account/brand?brand=${outcome.brand.id}&done=saved`);
  });

  app.post('/brand/delete', { schema: { hide: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const removed = await services.brands.remove(accountOf(request).id, field(body, 'brand_id'));
    if (!removed) return app.renderNotFoundPage(request, reply);
    return reply.seeOther('/account/brand?done=deleted');
  });

  // The report page with one of the account's brands over a sample report, for the form's preview frame.
  app.get(
    '/brand/preview',
    { schema: { hide: true, querystring: Type.Object({ brand: Type.String({ maxLength: 64 }), lang: Type.Optional(Type.String({ maxLength: 16 })) }) } },
    async (request, reply) => {
      const account = accountOf(request);
      const saved = (await services.brands.list(account.id)).find((item) => item.id === request.query.brand);
      if (!saved) return app.renderNotFoundPage(request, reply);
      const requested = request.query.lang;
      const language = isReportLanguage(requested) ? requested : ((await services.accounts.defaultLanguage(account.id)) ?? 'en');
      const sample: StoredReport = { id: '00000000-0000-4000-8000-000000000000', accountId: account.id, vin: PREVIEW_VIN, createdAt: new Date().toISOString(), lots: sandboxLots(PREVIEW_VIN) };
      const brand = brandView(saved, (hash) => `${basePath}/report/brand/${hash}.png`);
      const view = presentReport(sample, { language, brand });
      const accent = accentCss(brand);
      if (accent) allowStyle(reply, accent);
      // Framed by the brand page (the site's pages may not be framed otherwise).
      const csp = reply.getHeader('content-security-policy');
      if (typeof csp === 'string') reply.header('content-security-policy', csp.replace("frame-ancestors 'none'", "frame-ancestors 'self'"));
      reply.header('x-frame-options', 'SAMEORIGIN').header('cache-control', 'no-store').header('x-robots-tag', 'noindex, nofollow');
      return reply.view('report', {
        report: view,
        testReport: false,
        pdf: null,
        ...previewAssets,
        accentCss: accent,
        pdfHref: '#main',
        shareUrl: `${saved.reportBaseUrl ?? services.config.publicBaseUrl}/report/${sample.id}?lang=${language}`,
        getReportsHref: null,
      });
    },
  );
};

export default brandRoutes;
