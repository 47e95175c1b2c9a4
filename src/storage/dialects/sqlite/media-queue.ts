import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../../schema.ts';
import type { ClaimedRow, ClaimOptions, QueuedUrl } from '../dialect.ts';

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

/** URLs per statement; a search's lots rarely have more than a few dozen. */
const URLS_PER_STATEMENT = 500;
const archivedStatements = new Map<number, string>();

function archivedStatement(count: number): string {
  let text = archivedStatements.get(count);
  if (text === undefined) {
    text = `select url, hash, ext from media_images where url in (${new Array(count).fill('?').join(', ')}) and state = 'archived'`;
    archivedStatements.set(count, text);
  }
  return text;
}

/**
 * The search's resolution step: a plain IN list, one statement text per list length (prepared
 * once each by the connection's statement cache); measured about a fifth cheaper than passing the
 * URLs as one JSON array through json_each.
 */
export async function archivedMediaByUrl(
  kysely: Kysely<Database>,
  urls: readonly string[],
): Promise<{ url: string; hash: string; ext: string }[]> {
  const found: { url: string; hash: string; ext: string }[] = [];
  for (let start = 0; start < urls.length; start += URLS_PER_STATEMENT) {
    const slice = urls.slice(start, start + URLS_PER_STATEMENT);
    const { rows } = await kysely.executeQuery<{ url: string; hash: string; ext: string }>(CompiledQuery.raw(archivedStatement(slice.length), slice));
    found.push(...rows);
  }
  return found;
}
