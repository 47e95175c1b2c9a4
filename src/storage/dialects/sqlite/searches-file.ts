import type BetterSqlite3 from 'better-sqlite3';

/**
 * The searches' writes in a SQLite file of their own (issue 25; docs/decisions.md, "The searches'
 * writes in a file of their own"). A feed's pull holds the lots file's one write lock in slices;
 * a counted search's commit writes only the tables below, so with them in a second file, ATTACHed
 * to every connection as schema `searches`, the commit takes that file's lock alone and never
 * waits for the pull. SQLite resolves an unqualified table name through main, temp, then the
 * attached files in order, so the repositories' statements name these tables as before.
 *
 * The tables are exactly those a search's commit writes (search-commit.ts, ledger-statements.ts):
 * the usage counter, the report, the search record, the Idempotency-Key, a batch item's result.
 * Migration 0028 moves them here from main.
 */
export const SEARCHES_SCHEMA = 'searches';

/** In the order their rows are copied (a foreign key's parent before its child): reports before searches, searches before keys. */
export const SEARCHES_TABLES = ['usage_counters', 'reports', 'searches', 'idempotency_keys', 'batch_items'] as const;

/**
 * The searches file beside a main file: `<main minus .sqlite>-searches.sqlite`
 * (`DATA_DIR/vinhistory.sqlite` -> `DATA_DIR/vinhistory-searches.sqlite`). An in-memory main
 * database gets an in-memory one.
 */
export function searchesFileOf(file: string): string {
  if (file === ':memory:' || file === '') return ':memory:';
  return `${file.endsWith('.sqlite') ? file.slice(0, -'.sqlite'.length) : file}-searches.sqlite`;
}

/** A statement that names one of the searches file's tables (a word of the SQL: a false match only takes a lock early). */
const NAMES_A_SEARCHES_TABLE = new RegExp(`\\b(?:${SEARCHES_TABLES.join('|')})\\b`, 'i');

export function namesSearchesTable(sql: string): boolean {
  return NAMES_A_SEARCHES_TABLE.test(sql);
}

/**
 * Statements that take one file's write lock and change nothing. A write statement begins a
 * write transaction on the file it names when it starts, whatever rows it matches; as a
 * transaction's first statement on that file it waits in the busy handler when another connection
 * holds the lock (an upgrade from a read would fail at once with SQLITE_BUSY instead). They name
 * tables every migrated database has: Kysely's own in main, the usage counters in the searches file.
 */
export const MAIN_WRITE_LOCK = 'delete from main.kysely_migration where 0';
export const SEARCHES_WRITE_LOCK = `delete from ${SEARCHES_SCHEMA}.usage_counters where 0`;

/**
 * The searches file's settings as the main file's (connection.ts): WAL, synchronous=NORMAL, the
 * same page cache and memory map. `journal_mode`, `synchronous` and `cache_size` are per file.
 */
export function attachSearchesFile(raw: BetterSqlite3.Database, file: string, options: { readonly?: boolean } = {}): void {
  raw.prepare(`attach database ? as ${SEARCHES_SCHEMA}`).run(file);
  if (options.readonly) return;
  raw.pragma(`${SEARCHES_SCHEMA}.journal_mode = WAL`);
  raw.pragma(`${SEARCHES_SCHEMA}.synchronous = NORMAL`);
  raw.pragma(`${SEARCHES_SCHEMA}.mmap_size = 268435456`);
  raw.pragma(`${SEARCHES_SCHEMA}.cache_size = -65536`);
}

/** Whether the searches file holds its tables (migration 0028 has run, or put them there). */
export function searchesFileHasTables(raw: BetterSqlite3.Database): boolean {
  return raw.prepare(`select 1 from ${SEARCHES_SCHEMA}.sqlite_master where type = 'table' and name = 'usage_counters'`).get() !== undefined;
}

/**
 * Refuses a main file whose tables moved (0028 ran) beside a searches file without them: the file
 * was lost, or a restore brought back one file of the two. SQLite would create an empty file at
 * ATTACH and every search would then fail on a missing table; saying so at the start is clearer.
 */
export function checkSearchesFile(raw: BetterSqlite3.Database, file: string): void {
  const migrated = raw.prepare(`select 1 from main.sqlite_master where type = 'table' and name = 'kysely_migration'`).get() !== undefined;
  if (!migrated || raw.prepare(`select 1 from main.kysely_migration where name = '0028-searches-file'`).get() === undefined) return;
  if (searchesFileHasTables(raw)) return;
  throw new Error(
    `the searches file ${file} is missing or empty, but the database's searches, reports and usage were moved there: ` +
      'put back the searches file that belongs with this database (a backup restores both: docs/deploy.md, "Backups")',
  );
}

/**
 * How a connection's transactions take the two files' write locks (connection.ts runs them for
 * Kysely's transactions):
 *
 * - at BEGIN, the main file's lock only (what BEGIN IMMEDIATE did when there was one file: a
 *   deferred transaction that reads first cannot upgrade while another connection writes);
 *   BEGIN IMMEDIATE would take every attached file's lock, so a pull's batch or an import would
 *   hold the searches file too and every search's commit would wait for it;
 * - before the transaction's first statement that names a table of the searches file, that
 *   file's lock, in the busy handler: so a transaction that reads a search table and then writes
 *   one does not fail at once while a search commit holds the file.
 *
 * Always main before searches; a search's commit takes the searches file's alone (search-batch.ts)
 * and only reads main, so two writers never wait for each other in a cycle.
 *
 * Before the migrations have made the lock statements' tables (a new database), BEGIN IMMEDIATE
 * is used, and nothing is taken for the searches file: its tables are still in main then.
 */
export class TransactionLocks {
  private mainLock: BetterSqlite3.Statement | null = null;
  private searchesLock: BetterSqlite3.Statement | null = null;
  /** Whether this transaction holds the searches file's lock, or needs none. */
  private searchesTaken = true;

  constructor(private readonly raw: BetterSqlite3.Database) {}

  /** BEGIN, with the main file's write lock. */
  begin(): void {
    const lock = (this.mainLock ??= prepareIfPresent(this.raw, MAIN_WRITE_LOCK));
    if (lock === null) {
      this.raw.prepare('begin immediate').run();
      this.searchesTaken = true;
      return;
    }
    this.raw.prepare('begin').run();
    let present: boolean;
    try {
      present = runIfPresent(lock);
    } catch (error) {
      this.raw.prepare('rollback').run();
      throw error;
    }
    if (!present) {
      this.raw.prepare('rollback').run();
      this.mainLock = null;
      return this.begin();
    }
    this.searchesTaken = false;
  }

  /** Before a statement runs in this connection: takes the searches file's lock when the statement is the transaction's first on that file. */
  before(sql: string): void {
    if (this.searchesTaken || !this.raw.inTransaction || !namesSearchesTable(sql)) return;
    const lock = (this.searchesLock ??= prepareIfPresent(this.raw, SEARCHES_WRITE_LOCK));
    // Not yet migrated (or migrated down again): the tables are in main, whose lock the transaction holds.
    if (lock !== null && !runIfPresent(lock)) this.searchesLock = null;
    this.searchesTaken = true;
  }
}

/** Runs a lock statement; false when its table has gone since it was prepared (a migration down). */
function runIfPresent(lock: BetterSqlite3.Statement): boolean {
  try {
    lock.run();
    return true;
  } catch (error) {
    if (isNoSuchTable(error)) return false;
    throw error;
  }
}

/** The statement, or null while its table does not exist yet (prepared again next time). */
function prepareIfPresent(raw: BetterSqlite3.Database, sql: string): BetterSqlite3.Statement | null {
  try {
    return raw.prepare(sql);
  } catch (error) {
    if (isNoSuchTable(error)) return null;
    throw error;
  }
}

/** The lock statements' tables are missing before the migrations make them (or after one goes down). */
const isNoSuchTable = (error: unknown) => error instanceof Error && /no such table/.test(error.message);
