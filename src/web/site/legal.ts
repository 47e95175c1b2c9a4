import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import MarkdownIt from 'markdown-it';
import type { LegalDocumentName } from '../../accounts/legal-documents.ts';

/**
 * The operator's Markdown, rendered with raw HTML off (`html: false` escapes any tag the file
 * holds) and markdown-it's link check (no javascript:, vbscript:, file: or data: links other than
 * images), so that a legal page can carry nothing but text, headings, lists, tables and links.
 */
const markdown = new MarkdownIt({ html: false, linkify: true, typographer: true });
// Headings one level down: the page's own h1 is the document's title.
const defaultHeading = markdown.renderer.rules.heading_open;
markdown.renderer.rules.heading_open = (tokens, index, options, env, self) => {
  const token = tokens[index]!;
  if (token.tag === 'h1') token.tag = 'h2';
  return defaultHeading ? defaultHeading(tokens, index, options, env, self) : self.renderToken(tokens, index, options);
};
markdown.renderer.rules.heading_close = (tokens, index, options, _env, self) => {
  const token = tokens[index]!;
  if (token.tag === 'h1') token.tag = 'h2';
  return self.renderToken(tokens, index, options);
};

export function renderLegalMarkdown(source: string): string {
  // The document's own first "# Title" is dropped: the page heading says it.
  return markdown.render(source.replace(/^\s*#\s[^\n]*\n/, ''));
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
