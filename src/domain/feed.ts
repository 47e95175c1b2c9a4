/**
 * Feeds the service pulls itself (contract, "Feeds (operators)"; docs/feeds.md): what the operator
 * registers, and the state of its pulls as `feeds list` and the admin API show it.
 */
export const FEED_FORMATS = ['auto', 'ndjson', 'copart-csv', 'auctionsapi-json', 'csv'] as const;
export type FeedFormat = (typeof FEED_FORMATS)[number];

export const FEED_STATUSES = ['ok', 'not_modified', 'failed'] as const;
export type FeedStatus = (typeof FEED_STATUSES)[number];

/**
 * A header sent with every request of a pull: a literal value, kept sealed (webhooks/secret-box.ts),
 * or `env:NAME`, of which only the name is kept and the value read when the pull runs.
 */
export interface FeedHeader {
  name: string;
  /** The environment variable the value is read from, or null for a literal. */
  env: string | null;
  /** The literal value, sealed; null for an `env:` header. */
  sealed: string | null;
}

/** How a JSON API feed pages and asks for what changed since the last good pull. */
export interface FeedPaging {
  /** Follow the next page: a URL or cursor in the body, or a Link header's rel="next". */
  paged: boolean;
  /** The query parameter a cursor from the body is sent as (e.g. `cursor`); null: the body gives URLs. */
  cursorParam: string | null;
  /** The query parameter sent with the start time of the last good pull (e.g. `updated_since`); null: a full pull each time. */
  updatedSinceParam: string | null;
}

export interface FeedCounts {
  read: number;
  inserted: number;
  updated: number;
  unchanged: number;
  skipped: number;
}

export function emptyFeedCounts(): FeedCounts {
  return { read: 0, inserted: 0, updated: 0, unchanged: 0, skipped: 0 };
}

/** A feed as the operator set it up. */
export interface FeedSettings {
  name: string;
  url: string;
  format: FeedFormat;
  /** The CSV mapping (docs/import-formats.md) of format csv, as JSON text; null otherwise. */
  mapping: string | null;
  everySeconds: number;
  /** The headers; literal values are never shown back. */
  headers: FeedHeader[];
  /** The feed is a full listing: a lot missing from a good pull has left the auction's listing. */
  listing: boolean;
  paging: FeedPaging | null;
}

/** The validators and measures of the last good pull, which the next one is sent with and judged against. */
export interface FeedLastGood {
  etag: string | null;
  lastModified: string | null;
  bytes: number | null;
  rows: number | null;
  /** The CSV header line of the last good pull (a CSV feed). */
  header: string | null;
  /** When the last good pull started: the `updated_since` of the next one. */
  startedAt: string | null;
}

/** A paged pull under way: where it goes on, and what its earlier pages counted. */
export interface FeedCheckpoint {
  nextUrl: string;
  pages: number;
  counts: FeedCounts;
  startedAt: string;
}

export interface Feed extends FeedSettings {
  id: string;
  paused: boolean;
  createdAt: string;
  nextRunAt: string;
  lastAttemptAt: string | null;
  lastSuccessAt: string | null;
  lastStatus: FeedStatus | null;
  lastError: string | null;
  lastCounts: FeedCounts | null;
  failuresInRow: number;
  alerted: boolean;
  newestLotAt: string | null;
  /** The next pull skips the checks against the last good pull once (a header or size that changed on purpose). */
  acceptChanges: boolean;
  lastGood: FeedLastGood;
  checkpoint: FeedCheckpoint | null;
  leaseOwner: string | null;
  leaseUntil: string | null;
}

/** What one pull did, as its state records it. */
export type FeedPullResult =
  | { status: 'ok'; counts: FeedCounts; lastGood: FeedLastGood; newLots: boolean; left: number; returned: number }
  | { status: 'not_modified'; counts: FeedCounts }
  | { status: 'failed'; error: string; counts: FeedCounts; checkpoint: FeedCheckpoint | null };

/** A feed's name: what the lots it stores carry as their source, in a URL path and a metric label. */
export const FEED_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The URL as shown: without a user name, password, or query values that look like credentials. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    for (const key of [...parsed.searchParams.keys()]) {
      if (/token|key|secret|sig|password|auth|session|credential/i.test(key)) parsed.searchParams.set(key, 'REDACTED');
    }
    return parsed.toString();
  } catch {
    return url;
  }
}
