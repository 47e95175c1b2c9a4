import type { FeedHeader } from '../domain/feed.ts';

/** A header's name as HTTP allows it (a token), and a value of visible characters and spaces. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]{0,8000}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** Headers the puller sets itself: the operator may not replace them. */
const RESERVED = new Set(['host', 'content-length', 'accept-encoding', 'if-none-match', 'if-modified-since', 'connection', 'transfer-encoding']);
export const MAX_HEADERS = 20;

/** A header as given (`Name: value` or `Name: env:VAR`), before its literal value is sealed. */
export type ParsedHeader = { name: string; env: string } | { name: string; value: string };

/** Reads `Name: value`; the reason it is refused otherwise. */
export function parseHeader(text: string): ParsedHeader | { error: string } {
  const colon = text.indexOf(':');
  if (colon <= 0) return { error: 'a header is "Name: value" (e.g. "Cookie: env:COPART_COOKIE")' };
  const name = text.slice(0, colon).trim();
  const value = text.slice(colon + 1).trim();
  if (!HEADER_NAME.test(name)) return { error: `"${name.slice(0, 100)}" is not a header name` };
  if (RESERVED.has(name.toLowerCase())) return { error: `the ${name} header is set by the puller itself` };
  if (/^env:/i.test(value)) {
    const env = value.slice(4).trim();
    if (!ENV_NAME.test(env)) return { error: `the ${name} header names "${env.slice(0, 130)}", which is not an environment variable name` };
    return { name, env };
  }
  if (!HEADER_VALUE.test(value)) return { error: `the ${name} header's value has control characters or is longer than 8000 characters` };
  return { name, value };
}

/** The headers of a pull, their `env:` values read now; a variable that is not set fails the pull with its name. */
export async function resolveHeaders(
  headers: readonly FeedHeader[],
  sources: { environment: (name: string) => string | undefined; open: (sealed: string) => Promise<string> },
): Promise<{ headers: Record<string, string> } | { error: string }> {
  const resolved: Record<string, string> = {};
  for (const header of headers) {
    if (header.env !== null) {
      const value = sources.environment(header.env);
      if (value === undefined || value === '') return { error: `the ${header.name} header reads the environment variable ${header.env}, which is not set in this process` };
      resolved[header.name] = value;
    } else if (header.sealed !== null) {
      resolved[header.name] = await sources.open(header.sealed);
    }
  }
  return { headers: resolved };
}
