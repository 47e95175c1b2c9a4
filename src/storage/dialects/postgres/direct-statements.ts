import type pg from 'pg';
import type { Step } from '../../prepared-query.ts';

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
 * SQL still comes from Kysely's builder (PreparedQuery).
 */
export async function runDirect(client: pg.ClientBase, sql: string, parameters: unknown[]): Promise<unknown[]> {
  let name = names.get(sql);
  if (name === undefined) {
    name = `vinhistory_${names.size + 1}`;
    names.set(sql, name);
  }
  const result = await client.query({ name, text: sql, values: parameters });
  return result.rows;
}

/** Runs a unit of work written as a generator of steps (prepared-query.ts) on a connection, statement by statement. */
export async function runStepsDirect<R>(client: pg.ClientBase, steps: Generator<Step, R, unknown[]>): Promise<R> {
  let next = steps.next();
  while (!next.done) next = steps.next(await runDirect(client, next.value.query.sql, next.value.query.parameters(next.value.params)));
  return next.value;
}
