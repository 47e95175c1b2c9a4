import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply } from 'fastify';
import { DATABASE_BUSY_MESSAGE, DATABASE_BUSY_RETRY_AFTER_SECONDS, ERROR_STATUS } from '../errors.ts';
import { isDatabaseBusy } from '../storage/database.ts';
import webSession from './web-session.ts';
import { basePathOf } from './view.ts';
import { assetHref } from './assets.ts';
import accountRoutes from './account/index.ts';
import adminPages from './admin/index.ts';
import homeRoutes from './site/home.ts';
import authRoutes from './site/auth.ts';
import pricingRoutes from './site/pricing.ts';
import legalRoutes from './site/legal.ts';
import docsRoutes from './site/docs.ts';
import marketRoutes from './site/market.ts';
import verifyRoutes from './site/verify.ts';
import { pageHelpers } from './site/present.ts';

declare module 'fastify' {
  interface FastifyReply {
    /**
     * Renders a page of the site (pages scope only): the template with the layout's shared values
     * (who is logged in, links, a CSRF token for forms), never cached, since pages may be personal.
     */
    page(template: string, data: Record<string, unknown>, status?: number): FastifyReply;
    /** 303 to a path of the site, under the base path of PUBLIC_BASE_URL (pages scope only). */
    seeOther(path: string): FastifyReply;
  }
}

/**
 * The website: landing and pricing pages, sign-up and log-in, and the personal account, in one
 * encapsulated scope with cookies, form bodies, sessions and CSRF (plugins/app/web-session.ts).
 * Nothing registered here reaches the JSON API.
 */
const webRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services } = app;
  const { config } = services;
  const basePath = basePathOf(config.publicBaseUrl);

  // Forms only: the pages read what a browser's form sends (urlencoded, registered with the session
  // below, or multipart where a route registers it). A JSON or text body is 415, rather than values
  // of shapes no page expects (issue 28, F7: `{"email": {"toString": 1}}` made a 500).
  app.removeAllContentTypeParsers();
  await app.register(webSession, {
    sessions: services.sessions,
    configuredSecret: config.cookieSecret,
    loadStoredSecret: () => services.sessions.storedCookieSecret(),
    cookiePath: basePath || '/',
    alwaysSecure: config.publicBaseUrl.startsWith('https://'),
  });

  const scriptHref = assetHref(basePath, 'account.js');
  const docsScriptHref = assetHref(basePath, 'docs.js');
  const contact = services.seller.contactEmail();
  app.decorateReply('page', function (this: FastifyReply, template: string, data: Record<string, unknown>, status = 200) {
    const request = this.request;
    this.code(status).header('cache-control', 'no-store');
    return this.view(template, {
      ...pageHelpers(basePath),
      user: request.webSession ? { email: request.webSession.email } : null,
      csrf: () => this.csrfToken(),
      scriptHref,
      ...data,
      docsScriptHref: data.docsScript ? docsScriptHref : null,
    });
  });

  app.decorateReply('seeOther', function (this: FastifyReply, target: string) {
    return this.redirect(`${basePath}${target}`, 303);
  });

  // A field sent twice arrives as an array, which no form of ours sends: refused naming the field,
  // so that no page or service meets a value that is not a string (a multipart file is a Buffer).
  app.addHook('preValidation', async (request, reply) => {
    const body = request.body;
    if (body === null || typeof body !== 'object') return;
    const repeated = Object.entries(body).find(([, value]) => typeof value !== 'string' && !Buffer.isBuffer(value));
    if (!repeated) return;
    const heading = 'We could not read that form';
    await reply.page('error', { title: heading, heading, message: `The field “${repeated[0].slice(0, 64)}” was sent more than once. Go back, reload the page and send the form again.` }, 422);
    return reply;
  });

  // Stripe's checkout page is the target of the purchase form's redirect; form-action covers
  // redirects after a form is sent, so its origin is allowed on the pages with such a form.
  if (services.payments.checkoutProvider === 'stripe') {
    const origin = services.stripeCheckoutOrigin;
    app.addHook('onSend', async (_request, reply, payload) => {
      const csp = reply.getHeader('content-security-policy');
      if (typeof csp === 'string') reply.header('content-security-policy', csp.replace("form-action 'self'", `form-action 'self' ${origin}`));
      return payload;
    });
  }

  // Pages answer errors with pages, not the API's JSON.
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET') {
      return reply.page(
        'error',
        {
          title: 'This form has expired',
          heading: 'This form has expired',
          message: 'For your security, forms work only in the browser session that opened them. Go back, reload the page and send the form again.',
        },
        403,
      );
    }
    if (isDatabaseBusy(error)) {
      request.log.warn({ err: error }, 'database busy');
      reply.header('retry-after', String(DATABASE_BUSY_RETRY_AFTER_SECONDS));
      const heading = 'We are busy right now';
      return reply.page('error', { title: heading, heading, message: DATABASE_BUSY_MESSAGE }, ERROR_STATUS.DATABASE_BUSY);
    }
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'page failed');
    const heading = status === 500 ? 'Something went wrong on our side' : status === 413 ? 'That was too much to send' : 'We could not read that request';
    const message =
      status === 500
        ? `Please try again in a moment. If it keeps happening, write to us${contact ? ` at ${contact}` : ''} quoting ${request.id}.`
        : status === 415
          ? 'These pages take only what is sent by a browser form. Go back, reload the page and send the form again.'
          : 'Go back, check the form and try again.';
    return reply.page('error', { title: heading, heading, message }, status);
  });

  await app.register(homeRoutes);
  await app.register(pricingRoutes);
  await app.register(legalRoutes);
  await app.register(docsRoutes);
  await app.register(marketRoutes);
  await app.register(verifyRoutes);
  await app.register(authRoutes);
  await app.register(accountRoutes, { prefix: '/account' });
  // The operators' page (docs/operators.md): its own log-in with an operator token.
  await app.register(adminPages);
};

export default webRoutes;
