import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fp from 'fastify-plugin';
import fastifyStatic from '@fastify/static';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** The HTML 404 page, for any path outside /api/. */
    renderNotFoundPage: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;
  }
}

const here = path.dirname(fileURLToPath(import.meta.url));
export const VIEWS_DIR = path.resolve(here, '../../views');
export const PUBLIC_DIR = path.resolve(here, '../../public');

/** Server-rendered pages: Eta templates (auto-escaping) and the stylesheet under /assets/. */
export default fp(
  async (app) => {
    const eta = new Eta({ views: VIEWS_DIR, autoEscape: true, cache: app.deps.config.isProduction });
    await app.register(fastifyView, {
      engine: { eta },
      root: VIEWS_DIR,
      viewExt: 'eta',
      defaultContext: { baseUrl: app.deps.config.publicBaseUrl },
    });
    await app.register(fastifyStatic, {
      root: PUBLIC_DIR,
      prefix: '/assets/',
      decorateReply: false,
      maxAge: '1h',
    });
    app.decorate('renderNotFoundPage', async (_request: FastifyRequest, reply: FastifyReply) => {
      reply.code(404).header('x-robots-tag', 'noindex');
      return reply.view('not-found', { title: 'Page not found' });
    });
  },
  { name: 'view', dependencies: ['deps'] },
);
