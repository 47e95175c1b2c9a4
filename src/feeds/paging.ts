import type { FeedPaging } from '../domain/feed.ts';

/**
 * How a vendor's JSON API hands out pages (docs/feeds.md, "A paged vendor API"): the records are
 * the body when it is an array, else the first array among the usual fields; the next page is a
 * `Link: <...>; rel="next"` header, a URL in the body (`next`, `next_url`, `next_page_url`,
 * `links.next`, `paging.next`), or a cursor (`next_cursor`, `cursor`, `meta.next_cursor`) sent as
 * the query parameter the operator named.
 */

const RECORD_FIELDS = ['data', 'items', 'results', 'records', 'lots', 'vehicles'];
const NEXT_URL_PATHS = [['next'], ['next_url'], ['nextUrl'], ['next_page_url'], ['links', 'next'], ['paging', 'next'], ['pagination', 'next']];
const CURSOR_PATHS = [['next_cursor'], ['nextCursor'], ['cursor'], ['meta', 'next_cursor'], ['paging', 'cursor'], ['pagination', 'next_cursor']];

export function recordsOf(body: unknown): unknown[] | null {
  if (Array.isArray(body)) return body as unknown[];
  if (body === null || typeof body !== 'object') return null;
  const object = body as Record<string, unknown>;
  for (const field of RECORD_FIELDS) if (Array.isArray(object[field])) return object[field] as unknown[];
  return null;
}

function at(body: unknown, path: readonly string[]): unknown {
  let value = body;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** The relation types of a link's parameters (`; rel="prev next"`), lower-cased. */
function relsOf(parameters: string): string[] {
  for (const parameter of parameters.split(';')) {
    const [name, value] = parameter.split('=', 2);
    if (name?.trim().toLowerCase() === 'rel' && value !== undefined) return value.trim().replace(/^"|"$/g, '').toLowerCase().split(/\s+/);
  }
  return [];
}

/** The rel="next" target of a Link header (RFC 8288), resolved against the page's URL. */
export function linkNext(header: string | string[] | undefined, base: string): string | null {
  const text = Array.isArray(header) ? header.join(',') : header;
  if (!text) return null;
  for (const part of text.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (match && relsOf(match[2]!).includes('next')) return new URL(match[1]!, base).toString();
  }
  return null;
}

/** The next page's URL, or null on the last page. */
export function nextPage(body: unknown, linkHeader: string | string[] | undefined, pageUrl: string, paging: FeedPaging): string | null {
  const linked = linkNext(linkHeader, pageUrl);
  if (linked) return linked;
  for (const path of NEXT_URL_PATHS) {
    const value = at(body, path);
    if (typeof value === 'string' && value !== '') {
      // A body's "next" that is a URL (absolute or a path) is the next page; a bare token is a cursor.
      if (/^(?:https?:\/\/|\/|\?)/i.test(value)) return new URL(value, pageUrl).toString();
      if (paging.cursorParam) return withParam(pageUrl, paging.cursorParam, value);
    }
  }
  if (paging.cursorParam) {
    for (const path of CURSOR_PATHS) {
      const value = at(body, path);
      if ((typeof value === 'string' && value !== '') || typeof value === 'number') return withParam(pageUrl, paging.cursorParam, String(value));
    }
  }
  return null;
}

export function withParam(url: string, name: string, value: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set(name, value);
  return parsed.toString();
}
