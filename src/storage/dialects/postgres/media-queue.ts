import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../../schema.ts';
import type { ClaimedRow, ClaimOptions, QueuedUrl } from '../dialect.ts';

/** Rows per statement: 1,000 x 5 parameters stays far below the protocol's 65,535. */
const ROWS_PER_STATEMENT = 1000;
const statements = new Map<number, string>();

function enqueueStatement(rows: number): string {
  let text = statements.get(rows);
  if (text === undefined) {
    const values: string[] = [];
    for (let row = 0; row < rows; row++) {
      const p = row * 5;
      values.push(`($${p + 1}, $${p + 2}, 'queued', 0, $${p + 3}, $${p + 4}, $${p + 5})`);
    }
    text =
      'insert into media_images (url, host, state, attempts, next_attempt_at, created_at, updated_at) ' +
      `values ${values.join(', ')} on conflict (url) do nothing`;
    statements.set(rows, text);
  }
  return text;
}

/**
 * Multi-row insert-or-ignore, one round trip per 1,000 URLs; a URL already known (queued, archived
 * or removed) is left alone. ON CONFLICT DO NOTHING accepts a URL twice in one statement.
 */
export async function enqueueMediaUrls(kysely: Kysely<Database>, urls: readonly QueuedUrl[], at: string): Promise<number> {
  let added = 0;
  for (let start = 0; start < urls.length; start += ROWS_PER_STATEMENT) {
    const slice = urls.slice(start, start + ROWS_PER_STATEMENT);
    const params: unknown[] = [];
    for (const { url, host } of slice) params.push(url, host, at, at, at);
    const result = await kysely.executeQuery(CompiledQuery.raw(enqueueStatement(slice.length), params));
    added += Number(result.numAffectedRows ?? 0n);
  }
  return added;
}

const CLAIM =
  'update media_images set lease_owner = $1, lease_until = $2, updated_at = $3 where id in (' +
  "select id from media_images where state in ('queued', 'failed') and next_attempt_at <= $3 " +
  'and (lease_until is null or lease_until <= $3) and host <> all($5::text[]) order by id limit $4 for update skip locked) ' +
  'returning id, url, host, attempts';

/**
 * Several instances claim at once: SKIP LOCKED passes over the rows another claim is taking, and the
 * lease it writes keeps them out of every later claim until it runs out (an instance that died).
 */
export async function claimMediaImages(kysely: Kysely<Database>, options: ClaimOptions): Promise<ClaimedRow[]> {
  const { rows } = await kysely.executeQuery<ClaimedRow>(
    CompiledQuery.raw(CLAIM, [options.owner, options.leaseUntil, options.now, options.limit, options.skipHosts]),
  );
  return rows;
}

const ARCHIVED_BY_URL = "select url, hash, ext from media_images where url = any($1::text[]) and state = 'archived'";

/** One statement whatever the number of URLs (an array as its one parameter). */
export async function archivedMediaByUrl(
  kysely: Kysely<Database>,
  urls: readonly string[],
): Promise<{ url: string; hash: string; ext: string }[]> {
  const { rows } = await kysely.executeQuery<{ url: string; hash: string; ext: string }>(
    CompiledQuery.raw(ARCHIVED_BY_URL, [urls]),
  );
  return rows;
}
