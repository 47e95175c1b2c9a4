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
  const statement = directStatement(raw, sql);
  if (statement.reader) return statement.all(parameters);
  statement.run(parameters);
  return [];
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
