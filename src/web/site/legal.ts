import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { LegalDocumentName } from '../../accounts/legal-documents.ts';
import { renderMarkdown } from '../markdown.ts';

export function renderLegalMarkdown(source: string): string {
  // The document's own first "# Title" is dropped: the page heading says it.
  return renderMarkdown(source.replace(/^\s*#\s[^\n]*\n/, ''));
}

/** /terms and /privacy: the operator's documents in the site's layout, linked from every footer and from sign-up. */
const legalRoutes: FastifyPluginAsyncTypebox = async (app) => {
  for (const [path, name] of [['/terms', 'terms'], ['/privacy', 'privacy']] as const satisfies readonly (readonly [string, LegalDocumentName])[]) {
    app.get(path, { schema: { hide: true } }, async (request, reply) => {
      const document = await app.services.legal.read(name);
      if (!document) {
        request.log.warn({ document: name }, 'legal document missing');
        const heading = name === 'terms' ? 'Terms of Service' : 'Privacy Policy';
        return reply.page('error', { title: heading, heading, message: `The ${heading} are being prepared. Please come back soon, or write to us.` }, 503);
      }
      return reply.page('legal', {
        title: document.title,
        section: name,
        indexable: !document.placeholder,
        document: { title: document.title, placeholder: document.placeholder, updatedAt: document.updatedAt, html: renderLegalMarkdown(document.markdown) },
      });
    });
  }
};

export default legalRoutes;
