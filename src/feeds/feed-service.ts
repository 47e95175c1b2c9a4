import type { Feed, FeedFormat, FeedHeader, FeedPaging, FeedPullResult, FeedSettings } from '../domain/feed.ts';
import { displayUrl, FEED_FORMATS, FEED_NAME } from '../domain/feed.ts';
import { MappingError, parseCsvMapping } from '../ingest/formats/csv-mapping.ts';
import type { Outcome } from '../operations/operator-service.ts';
import type { OutboundClient } from '../outbound/outbound-client.ts';
import type { FeedsRepository } from '../storage/repositories/feeds-repository.ts';
import { MAX_HEADERS, parseHeader } from './feed-headers.ts';
import type { FeedScheduler } from './feed-scheduler.ts';

/** What `feeds add` and `POST /admin/v1/feeds` take, as given (validated here). */
export interface FeedInput {
  name: string;
  url: string;
  format?: string | undefined;
  /** The CSV mapping (docs/import-formats.md) as parsed JSON, for format csv. */
  map?: unknown;
  /** `<minutes>m` or `<hours>h`; 1h unless given. */
  every?: string | undefined;
  /** `Name: value` or `Name: env:VAR`. */
  headers?: readonly string[] | undefined;
  listing?: boolean | undefined;
  paged?: boolean | undefined;
  cursorParam?: string | undefined;
  updatedSinceParam?: string | undefined;
}

const EVERY = /^([1-9][0-9]{0,5})(m|h)$/;
const MIN_EVERY_SECONDS = 60;
const MAX_EVERY_SECONDS = 31 * 24 * 3600;
const PARAM = /^[A-Za-z0-9_.[\]-]{1,64}$/;
export const DEFAULT_EVERY = '1h';

/** `15m`, `1h`, `90m`; the seconds, or the reason it is refused. */
export function parseEvery(text: string): number | string {
  const match = EVERY.exec(text.trim());
  if (!match) return 'every is a number of minutes or hours, such as 15m or 6h';
  const seconds = Number(match[1]) * (match[2] === 'h' ? 3600 : 60);
  if (seconds < MIN_EVERY_SECONDS || seconds > MAX_EVERY_SECONDS) return 'every is from 1m to 744h (31 days)';
  return seconds;
}

/** A schedule as written back: whole hours as `h`, else minutes. */
export function formatEvery(seconds: number): string {
  return seconds % 3600 === 0 ? `${seconds / 3600}h` : `${Math.round(seconds / 60)}m`;
}

/** A feed as `feeds list --json` and the admin API show it (contract, "Feeds (operators)"). */
export interface FeedJson {
  name: string;
  url: string;
  format: FeedFormat;
  every: string;
  paused: boolean;
  last_attempt_at: string | null;
  last_success_at: string | null;
  last_status: Feed['lastStatus'];
  last_error: string | null;
  read: number;
  inserted: number;
  updated: number;
  unchanged: number;
  skipped: number;
  next_run_at: string;
  listing: boolean;
  paged: boolean;
  headers: { name: string; from: 'env' | 'literal'; env: string | null }[];
  failures_in_row: number;
  newest_lot_at: string | null;
  resume_page: number | null;
}

export function feedJson(feed: Feed): FeedJson {
  const counts = feed.lastCounts ?? { read: 0, inserted: 0, updated: 0, unchanged: 0, skipped: 0 };
  return {
    name: feed.name,
    url: displayUrl(feed.url),
    format: feed.format,
    every: formatEvery(feed.everySeconds),
    paused: feed.paused,
    last_attempt_at: feed.lastAttemptAt,
    last_success_at: feed.lastSuccessAt,
    last_status: feed.lastStatus,
    last_error: feed.lastError,
    read: counts.read,
    inserted: counts.inserted,
    updated: counts.updated,
    unchanged: counts.unchanged,
    skipped: counts.skipped,
    next_run_at: feed.nextRunAt,
    listing: feed.listing,
    paged: feed.paging?.paged ?? false,
    headers: feed.headers.map((header) => ({ name: header.name, from: header.env !== null ? ('env' as const) : ('literal' as const), env: header.env })),
    failures_in_row: feed.failuresInRow,
    newest_lot_at: feed.newestLotAt,
    resume_page: feed.checkpoint ? feed.checkpoint.pages + 1 : null,
  };
}

/** What the audit log keeps of a feed an operator added: its settings as listed (the URL without credentials; the headers' names, never a value). */
export function feedAuditDetails(feed: Feed): Record<string, unknown> {
  const json = feedJson(feed);
  return { url: json.url, format: json.format, every: json.every, listing: json.listing, paged: json.paged, headers: json.headers.map((header) => header.name) };
}

const invalid = (field: string, message: string) => ({ kind: 'invalid' as const, field, message });
const notFound = (name: string) => ({ kind: 'not-found' as const, message: `No feed is named ${name} (vinhistory feeds list shows them).` });

/**
 * The operator's feeds, one service for `vinhistory feeds` and `/admin/v1/feeds`: registering
 * (validated, literal header values sealed, `env:` headers kept as names), listing, pausing,
 * removing, and pulls now. The pulls themselves are the scheduler's (feed-scheduler.ts).
 */
export class FeedService {
  constructor(
    private readonly options: {
      feeds: FeedsRepository;
      scheduler: FeedScheduler;
      outbound: Pick<OutboundClient, 'refusal'>;
      seal: (secret: string) => Promise<string>;
      now: () => Date;
    },
  ) {}

  async add(input: FeedInput): Promise<Outcome<{ feed: Feed }>> {
    const name = input.name.trim();
    if (!FEED_NAME.test(name)) return invalid('name', 'a feed name is 1 to 64 lower-case letters, digits, - and _, starting with a letter or digit (it is the source of the lots it stores)');
    const url = input.url.trim();
    if (url.length > 2000) return invalid('url', 'the URL is longer than 2000 characters');
    const refusal = this.options.outbound.refusal(url);
    if (refusal) return invalid('url', `the URL is refused: ${refusal}`);
    const format = (input.format ?? 'auto').trim();
    if (!(FEED_FORMATS as readonly string[]).includes(format)) return invalid('format', `format is one of ${FEED_FORMATS.join(', ')}`);
    let mapping: string | null = null;
    if (input.map !== undefined && input.map !== null) {
      try {
        mapping = JSON.stringify(parseCsvMapping(input.map, 'the mapping'));
      } catch (error) {
        if (error instanceof MappingError) return invalid('map', error.message);
        throw error;
      }
    }
    if (format === 'csv' && mapping === null) return invalid('map', 'format csv needs a mapping (docs/import-formats.md)');
    if (mapping !== null && format !== 'csv') return invalid('map', 'a mapping is for format csv only');
    const every = parseEvery(input.every ?? DEFAULT_EVERY);
    if (typeof every === 'string') return invalid('every', every);
    const given = input.headers ?? [];
    if (given.length > MAX_HEADERS) return invalid('headers', `at most ${MAX_HEADERS} headers`);
    const headers: FeedHeader[] = [];
    for (const text of given) {
      const header = parseHeader(text);
      if ('error' in header) return invalid('headers', header.error);
      if (headers.some((h) => h.name.toLowerCase() === header.name.toLowerCase())) return invalid('headers', `the ${header.name} header is given twice`);
      headers.push('env' in header ? { name: header.name, env: header.env, sealed: null } : { name: header.name, env: null, sealed: await this.options.seal(header.value) });
    }
    for (const [field, value] of [['cursor_param', input.cursorParam], ['updated_since_param', input.updatedSinceParam]] as const) {
      if (value !== undefined && !PARAM.test(value)) return invalid(field, `${field} is a query parameter name: 1 to 64 letters, digits, _ . - [ ]`);
    }
    const jsonApi = input.paged === true || input.cursorParam !== undefined || input.updatedSinceParam !== undefined;
    if (jsonApi && !['auto', 'ndjson', 'auctionsapi-json'].includes(format)) return invalid('format', 'a paged or incremental feed is a JSON API: format auto, ndjson or auctionsapi-json');
    const paging: FeedPaging | null = jsonApi
      ? { paged: input.paged === true || input.cursorParam !== undefined, cursorParam: input.cursorParam ?? null, updatedSinceParam: input.updatedSinceParam ?? null }
      : null;
    if (input.listing === true && paging?.updatedSinceParam) return invalid('listing', 'a listing feed lists every lot each time: it cannot also ask only for what changed (updated_since_param)');
    const settings: FeedSettings = { name, url, format: format as FeedFormat, mapping, everySeconds: every, headers, listing: input.listing === true, paging };
    const feed = await this.options.feeds.create(settings, this.options.now());
    if (!feed) return { kind: 'refused', message: `A feed named ${name} exists already (remove it first to register it again).` };
    return { kind: 'done', feed };
  }

  list(): Promise<Feed[]> {
    return this.options.feeds.list();
  }

  async get(name: string): Promise<Outcome<{ feed: Feed }>> {
    const feed = await this.options.feeds.findByName(name);
    return feed ? { kind: 'done', feed } : notFound(name);
  }

  async remove(name: string): Promise<Outcome<object>> {
    return (await this.options.feeds.remove(name)) ? { kind: 'done' } : notFound(name);
  }

  async pause(name: string, paused: boolean): Promise<Outcome<{ feed: Feed }>> {
    const feed = await this.options.feeds.setPaused(name, paused);
    return feed ? { kind: 'done', feed } : notFound(name);
  }

  /** Due at once: the next poll of any instance pulls it (the admin API's run). */
  async requestRun(name: string, acceptChanges: boolean): Promise<Outcome<{ feed: Feed }>> {
    const feed = await this.options.feeds.makeDue(name, this.options.now(), acceptChanges);
    return feed ? { kind: 'done', feed } : notFound(name);
  }

  /** A pull in this process now (`feeds run`), unless another instance is pulling the feed. */
  async runNow(name: string, acceptChanges: boolean): Promise<Outcome<{ feed: Feed; result: FeedPullResult }>> {
    if (acceptChanges) {
      if (!(await this.options.feeds.makeDue(name, this.options.now(), true))) return notFound(name);
    } else if (!(await this.options.feeds.findByName(name))) {
      return notFound(name);
    }
    const run = await this.options.scheduler.runNow(name);
    if (!run) return { kind: 'refused', message: `The feed ${name} is being pulled by another instance now; its outcome will show in feeds list.` };
    const feed = (await this.options.feeds.findByName(name)) ?? run.feed;
    return { kind: 'done', feed, result: run.result };
  }
}
