import { refusalFor } from '../ingest/sources/open-lot-source.ts';
import type { FeedFormat, FeedLastGood } from '../domain/feed.ts';

/**
 * What refuses a pulled file before anything of it is stored (docs/feeds.md, "When a pull
 * fails"). A pull is compared with the last good one only when that one was large enough for a
 * drop to mean something.
 */

/** A pull with fewer rows (or bytes) than this share of the last good pull's is refused as truncated. */
export const TRUNCATION_RATIO = 0.5;
/** The last good pull must have had at least this many rows for the comparison to be made. */
export const MIN_ROWS_COMPARED = 20;

/** The marks of the bot walls and challenge pages a download meets instead of the file. */
const CHALLENGE = /incapsula|_incapsula_resource|imperva|request unsuccessful|cf-chl|challenge-platform|just a moment\.\.\.|attention required|captcha|distil_r_captcha|px-captcha|akamai|access denied/i;

/** The file's first bytes: an HTML page (or a bot challenge) is refused whatever its Content-Type says. */
export function contentRefusal(head: string, contentType: string | null): string | null {
  const served = contentType ? ` (served as ${contentType.split(';')[0]!.trim()})` : '';
  const looksHtml = /^\s*(?:\uFEFF)?\s*</.test(head) && /<(?:!doctype\s+html|html|head|body|script|meta|title)\b/i.test(head);
  if (looksHtml && CHALLENGE.test(head)) return `a bot-challenge page, not the feed${served}: the source blocks this client (docs/feeds.md, "Bot walls")`;
  if (looksHtml) return `an HTML page, not the feed${served}: a login or error page?`;
  if (contentType && /^\s*text\/html\b/i.test(contentType)) return 'the answer is an HTML page (Content-Type text/html), not the feed';
  return refusalFor(head);
}

const JSON_FORMATS: readonly FeedFormat[] = ['ndjson', 'auctionsapi-json'];
const CSV_FORMATS: readonly FeedFormat[] = ['copart-csv', 'csv'];

/** A file of another format than the feed's: JSON where CSV was expected, or the other way. */
export function formatRefusal(format: FeedFormat, head: string): string | null {
  const start = head.replace(/^\uFEFF/, '').trimStart();
  const json = start.startsWith('{') || start.startsWith('[');
  if (JSON_FORMATS.includes(format) && !json) return `the feed is ${format} but the file is not JSON (it starts "${firstLine(start).slice(0, 60)}")`;
  if (CSV_FORMATS.includes(format) && json) return `the feed is ${format} but the file is JSON`;
  return null;
}

export function firstLine(text: string): string {
  const end = text.search(/\r?\n/);
  return (end === -1 ? text : text.slice(0, end)).replace(/^\uFEFF/, '');
}

/** What a pulled file measured: its size and rows, and its CSV header line. */
export interface PulledMeasure {
  bytes: number;
  /** Data rows: lines of a CSV less its header, lines of NDJSON. */
  rows: number;
  header: string | null;
}

/** A file far smaller than the last good one, or a CSV whose header changed; null when it may be stored. */
export function comparisonRefusal(measure: PulledMeasure, lastGood: FeedLastGood): string | null {
  if (lastGood.rows !== null && lastGood.rows >= MIN_ROWS_COMPARED) {
    if (measure.rows === 0) return `the file has no rows where the last good pull had ${lastGood.rows}`;
    if (measure.rows < lastGood.rows * TRUNCATION_RATIO) {
      return `truncated: ${measure.rows} rows where the last good pull had ${lastGood.rows} (below ${TRUNCATION_RATIO * 100}% of it)`;
    }
    if (lastGood.bytes !== null && measure.bytes < lastGood.bytes * TRUNCATION_RATIO) {
      return `truncated: ${measure.bytes} bytes where the last good pull had ${lastGood.bytes} (below ${TRUNCATION_RATIO * 100}% of it)`;
    }
  }
  if (lastGood.header !== null && measure.header !== null && lastGood.header !== measure.header) {
    return `the CSV header changed: ${describeHeaderChange(lastGood.header, measure.header)}`;
  }
  return null;
}

function columnsOf(line: string): string[] {
  return line.split(/[,;\t|]/).map((name) => name.trim().replace(/^"|"$/g, ''));
}

function describeHeaderChange(before: string, after: string): string {
  const was = columnsOf(before);
  const now = columnsOf(after);
  const added = now.filter((name) => !was.includes(name));
  const removed = was.filter((name) => !now.includes(name));
  const list = (names: string[]) => names.slice(0, 5).map((name) => JSON.stringify(name)).join(', ') + (names.length > 5 ? ', ...' : '');
  const parts = [...(added.length > 0 ? [`added ${list(added)}`] : []), ...(removed.length > 0 ? [`removed ${list(removed)}`] : [])];
  return parts.length > 0 ? parts.join('; ') : 'the same columns in another order';
}
