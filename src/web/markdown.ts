import MarkdownIt from 'markdown-it';

/**
 * Markdown the site renders (the operator's legal pages, the OpenAPI descriptions on /docs), with
 * raw HTML off (`html: false` escapes any tag the text holds) and markdown-it's link check (no
 * javascript:, vbscript:, file: or data: links other than images): the text can carry nothing
 * but text, headings, lists, tables, code and links.
 */
const markdown = new MarkdownIt({ html: false, linkify: true, typographer: true });

// Headings one level down: the page's own h1 is the document's title.
for (const rule of ['heading_open', 'heading_close'] as const) {
  markdown.renderer.rules[rule] = (tokens, index, options, _env, self) => {
    const token = tokens[index]!;
    if (token.tag === 'h1') token.tag = 'h2';
    return self.renderToken(tokens, index, options);
  };
}

export function renderMarkdown(source: string): string {
  return markdown.render(source);
}

/** One paragraph's worth, without the <p>: for a description inside a table cell or a list item. */
export function renderInlineMarkdown(source: string): string {
  return markdown.renderInline(source);
}
