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
  if (statement.reader) return statement.all(parameters);
  statement.run(parameters);
  return [];
}
