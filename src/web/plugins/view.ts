import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fp from 'fastify-plugin';
import fastifyStatic from '@fastify/static';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ASSETS_DIR, assetHref } from '../assets.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The HTML 404 page, for any path outside /api/. */
    renderNotFoundPage: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;
  }
}

const here = path.dirname(fileURLToPath(import.meta.url));
export const VIEWS_DIR = path.resolve(here, '../views');

/**
 * Links in pages are built from the path of PUBLIC_BASE_URL, so that a service published under a
 * prefix (https://example.com/vin/) still finds its stylesheet, while a page served on another
 * host (a test on 127.0.0.1) still loads it from where it was served.
 */
export function basePathOf(publicBaseUrl: string): string {
  return new URL(publicBaseUrl).pathname.replace(/\/+$/, '');
}

/** Server-rendered pages: Eta templates (auto-escaping) and the stylesheet under /assets/. */
export default fp(
  async (app) => {
    const { config } = app.services;
    const basePath = basePathOf(config.publicBaseUrl);
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
        stylesheetHref: assetHref(basePath, 'app.css'),
      },
    });
    await app.register(fastifyStatic, {
      root: ASSETS_DIR,
      prefix: '/assets/',
      decorateReply: false,
      maxAge: config.isProduction ? '30d' : 0,
    });
    app.decorate('renderNotFoundPage', async (_request: FastifyRequest, reply: FastifyReply) => {
      reply.code(404).header('x-robots-tag', 'noindex');
      return reply.view('not-found', { title: 'Page not found' });
    });
  },
  { name: 'view', dependencies: ['services'] },
);
