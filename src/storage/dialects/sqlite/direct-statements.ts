import type BetterSqlite3 from 'better-sqlite3';

/** Statements prepared once per connection, by SQL text. */
const prepared = new WeakMap<BetterSqlite3.Database, Map<string, BetterSqlite3.Statement>>();

/**
 * Runs a statement on better-sqlite3 itself, synchronously: for the hot path, where Kysely's async
 * driver hop (connection, mutex, promise per statement) costs more than the statement. The SQL
 * still comes from Kysely's builder (PreparedQuery). Answers the rows of a statement that returns
 * rows, else none.
 */
export function runDirect(raw: BetterSqlite3.Database, sql: string, parameters: unknown[]): unknown[] {
  return runStatement(directStatement(raw, sql), parameters);
}

/** The rows of a statement that returns rows, else none once it has run. */
function runStatement(statement: BetterSqlite3.Statement, parameters: unknown[]): unknown[] {
  if (statement.reader) return statement.all(parameters);
  statement.run(parameters);
  return [];
}

/** Statements of an open-ended family, each kept while its owner is (runKept). */
const kept = new WeakMap<object, { raw: BetterSqlite3.Database; statement: BetterSqlite3.Statement }>();

/**
 * runDirect for a statement kept by `owner` rather than by its text for the life of the
 * connection: the catalogue's shapes of query are as many as a client cares to send, and their
 * owner (the repository's bounded cache) drops them. Kysely's driver prepares a statement on
 * every run: a page of the catalogue (30 json_object pairs) came 3-13% cheaper kept
 * (docs/benchmarks.md, "The catalogue page's remaining costs").
 */
export function runKeptDirect(raw: BetterSqlite3.Database, owner: object, sql: string, parameters: unknown[]): unknown[] {
  let entry = kept.get(owner);
  if (entry === undefined || entry.raw !== raw) {
    entry = { raw, statement: raw.prepare(sql) };
    kept.set(owner, entry);
  }
  return runStatement(entry.statement, parameters);
}

/**
 * The statement of this SQL text on better-sqlite3 itself, prepared once per connection. Only for
 * a fixed set of texts (a map without bound), and run only where the caller holds the connection:
 * outside any transaction (runDirect), or inside its own (an import batch, through Kysely's
 * provideConnection), where a statement a row through Kysely's driver costs a promise and a
 * mutex hop each.
 */
export function directStatement(raw: BetterSqlite3.Database, sql: string): BetterSqlite3.Statement {
  let statements = prepared.get(raw);
  if (statements === undefined) {
    statements = new Map();
    prepared.set(raw, statements);
  }
  let statement = statements.get(sql);
  if (statement === undefined) {
    statement = raw.prepare(sql);
    statements.set(sql, statement);
  }
  return statement;
}
