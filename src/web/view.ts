import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fp from 'fastify-plugin';
import fastifyStatic from '@fastify/static';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ASSETS_DIR, assetHref, contentHash, isStylesheetPart, readStylesheet, STYLESHEET } from './assets.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The HTML 404 page, for any path outside /api/. */
    renderNotFoundPage: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;
  }
}

const here = path.dirname(fileURLToPath(import.meta.url));
export const VIEWS_DIR = path.resolve(here, 'views');

/**
 * Links in pages are built from the path of PUBLIC_BASE_URL, so that a service published under a
 * prefix (https://example.com/vin/) still finds its stylesheet, while a page served on another
 * host (a test on 127.0.0.1) still loads it from where it was served.
 */
export function basePathOf(publicBaseUrl: string): string {
  return new URL(publicBaseUrl).pathname.replace(/\/+$/, '');
}

/** Server-rendered pages: Eta templates (auto-escaping), and the stylesheet and script under /assets/. */
export default fp(
  async (app) => {
    const { config } = app.services;
    const basePath = basePathOf(config.publicBaseUrl);
    const stylesheet = readStylesheet();
    const maxAgeSeconds = config.isProduction ? 30 * 24 * 60 * 60 : 0;
    const eta = new Eta({ views: VIEWS_DIR, autoEscape: true, cache: config.isProduction });
    await app.register(fastifyView, {
      engine: { eta },
      root: VIEWS_DIR,
      viewExt: 'eta',
      // Decided by our config, not by @fastify/view reading NODE_ENV itself.
      production: config.isProduction,
      defaultContext: {
        baseUrl: config.publicBaseUrl,
        homeHref: `${basePath}/`,
        contactEmail: app.services.seller.contactEmail(),
        faviconHref: assetHref(basePath, 'favicon.svg'),
        stylesheetHref: assetHref(basePath, STYLESHEET, stylesheet),
      },
    });
    await app.register(fastifyStatic, {
      root: ASSETS_DIR,
      prefix: '/assets/',
      decorateReply: false,
      maxAge: maxAgeSeconds * 1000,
      allowedPath: (pathName) => !isStylesheetPart(pathName.slice(1)),
    });
    // Served as the static files are: cached as long, revalidated by its hash. Outside production the
    // parts are joined again for each request, so that an edited part shows on reload.
    app.route({
      method: ['GET', 'HEAD'],
      url: `/assets/${STYLESHEET}`,
      schema: { hide: true },
      handler: async (request, reply) => {
        const css = config.isProduction ? stylesheet : readStylesheet();
        const etag = `"${contentHash(css)}"`;
        reply.header('cache-control', `public, max-age=${maxAgeSeconds}`).header('etag', etag);
        if (request.headers['if-none-match'] === etag) return reply.code(304).send();
        return reply.type('text/css; charset=utf-8').send(css);
      },
    });
    // Browsers ask for /favicon.ico on pages that name no icon (a JSON answer opened in a tab).
    app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) =>
      reply.header('cache-control', `public, max-age=${maxAgeSeconds}`).type('image/svg+xml').send(readFileSync(path.join(ASSETS_DIR, 'favicon.svg'))),
    );
    app.decorate('renderNotFoundPage', async (_request: FastifyRequest, reply: FastifyReply) => {
      reply.code(404).header('x-robots-tag', 'noindex');
      return reply.view('not-found', { title: 'Page not found' });
    });
  },
  { name: 'view', dependencies: ['services'] },
);
