import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../../schema.ts';

export interface QueuedUrl {
  readonly url: string;
  readonly host: string;
}

export interface ClaimOptions {
  readonly owner: string;
  readonly limit: number;
  readonly now: string;
  readonly leaseUntil: string;
  /** Hosts this claimer is already fetching from as much as it may: their images wait. */
  readonly skipHosts: readonly string[];
}

export interface ClaimedRow {
  id: number;
  url: string;
  host: string;
  attempts: number;
}

const ENQUEUE =
  'insert into media_images (url, host, state, attempts, next_attempt_at, created_at, updated_at) ' +
  "values (?, ?, 'queued', 0, ?, ?, ?) on conflict (url) do nothing";

/**
 * One prepared insert-or-ignore per URL on the transaction's connection: SQLite runs in-process,
 * so a row costs no round trip, and a URL already known (queued, archived or removed) is left alone.
 */
export async function enqueueMediaUrls(kysely: Kysely<Database>, urls: readonly QueuedUrl[], at: string): Promise<number> {
  if (urls.length === 0) return 0;
  return kysely.getExecutor().provideConnection(async (connection) => {
    let added = 0;
    for (const { url, host } of urls) {
      const result = await connection.executeQuery(CompiledQuery.raw(ENQUEUE, [url, host, at, at, at]));
      added += Number(result.numAffectedRows ?? 0n);
    }
    return added;
  });
}

const CLAIM =
  'update media_images set lease_owner = ?, lease_until = ?, updated_at = ? where id in (' +
  "select id from media_images where state in ('queued', 'failed') and next_attempt_at <= ? " +
  'and (lease_until is null or lease_until <= ?) and host not in (select value from json_each(?)) order by id limit ?) ' +
  'returning id, url, host, attempts';

/**
 * SQLite has one writer at a time: the update's own write lock keeps two claims apart, so the
 * select inside it needs no row locks.
 */
export async function claimMediaImages(kysely: Kysely<Database>, options: ClaimOptions): Promise<ClaimedRow[]> {
  const { rows } = await kysely.executeQuery<ClaimedRow>(
    CompiledQuery.raw(CLAIM, [options.owner, options.leaseUntil, options.now, options.now, options.now, JSON.stringify(options.skipHosts), options.limit]),
  );
  return rows;
}

const ARCHIVED_BY_URL =
  "select url, hash, ext from media_images where url in (select value from json_each(?)) and state = 'archived'";

/** One statement whatever the number of URLs (a JSON array as its one parameter), so it is prepared once. */
export async function archivedMediaByUrl(
  kysely: Kysely<Database>,
  urls: readonly string[],
): Promise<{ url: string; hash: string; ext: string }[]> {
  const { rows } = await kysely.executeQuery<{ url: string; hash: string; ext: string }>(
    CompiledQuery.raw(ARCHIVED_BY_URL, [JSON.stringify(urls)]),
  );
  return rows;
}
