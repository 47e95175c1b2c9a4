import type pg from 'pg';

/**
 * One statement name per SQL text, for the whole process: a connection prepares a name once and
 * must never see it again with another text. The hot path issues a handful of texts, so this stays small.
 */
const names = new Map<string, string>();

/**
 * Runs a statement on a pool connection as a named prepared statement: the connection parses and
 * plans it the first time only, and afterwards each run is a Bind and an Execute. Kysely's driver
 * sends every statement unnamed, to be parsed and planned again each time; on the search commit,
 * a handful of statements run over and over, that is most of PostgreSQL's work per statement. The
 * SQL still comes from Kysely's builder (PreparedQuery). On a connection in pipeline mode (the
 * pool's), statements sent without waiting for the one before go out together (commits.ts).
 */
export async function runDirect(client: pg.ClientBase, sql: string, parameters: unknown[]): Promise<unknown[]> {
  const result = await client.query<Record<string, unknown>>({ name: statementName(sql), text: sql, values: parameters });
  return result.rows;
}

/**
 * The same on whichever pool connection is free: the search path's reads (the lots of a VIN),
 * which would otherwise go through Kysely's driver to be parsed and planned on every search.
 */
export async function runPooled(pool: pg.Pool, sql: string, parameters: unknown[]): Promise<unknown[]> {
  const result = await pool.query<Record<string, unknown>>({ name: statementName(sql), text: sql, values: parameters });
  return result.rows;
}

function statementName(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) {
    name = `vinhistory_${names.size + 1}`;
    names.set(sql, name);
  }
  return name;
}

/** The most texts of open-ended families (runKeptPooled) that get a name, for the life of a pool. */
export const MAX_KEPT_NAMES = 64;
/** Per pool: its connections are where the named statements live, and a process may hold several pools. */
const keptNamesOf = new WeakMap<pg.Pool, Map<string, string>>();

/**
 * runPooled for a statement of an open-ended family (the catalogue's shapes of query, which a
 * client can multiply): a named statement stays prepared on every connection that ran it until
 * the connection closes, so only the first MAX_KEPT_NAMES texts a pool meets are named; any
 * other answers null, to run unnamed through Kysely as before. Unnamed, a catalogue page was
 * parsed and planned on every call (about 0.3 ms of PostgreSQL's CPU a page: docs/benchmarks.md).
 */
export function runKeptPooled(pool: pg.Pool, sql: string, parameters: unknown[]): Promise<unknown[]> | null {
  let keptNames = keptNamesOf.get(pool);
  if (keptNames === undefined) keptNamesOf.set(pool, (keptNames = new Map<string, string>()));
  let name = keptNames.get(sql);
  if (name === undefined) {
    if (keptNames.size >= MAX_KEPT_NAMES) return null;
    name = `vinhistory_kept_${keptNames.size + 1}`;
    keptNames.set(sql, name);
  }
  return pool.query<Record<string, unknown>>({ name, text: sql, values: parameters }).then((result) => result.rows);
}
