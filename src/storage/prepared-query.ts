import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { Db } from './database.ts';
import { runPooled } from './dialects/postgres/direct-statements.ts';
import { runDirect } from './dialects/sqlite/direct-statements.ts';

type Placeholders<P> = { readonly [K in keyof P]: P[K] };

/**
 * A Kysely query built and compiled once, run many times with new parameters. Building a query
 * costs more than running it on SQLite (about 60 µs of the 80 µs a token lookup took), and the
 * hot path issues the same few queries on every search. The SQL still comes from Kysely's
 * builder and compiler for the database at hand; only the parameter values change.
 *
 * The builder receives placeholders: unique strings that the compiled parameter list is searched
 * for, so each named parameter lands in its position(s). A query whose shape depends on a value
 * (an IN list of variable length) cannot be prepared this way.
 */
export class PreparedQuery<P extends Record<string, unknown>, Row> {
  /** The compiled SQL, for a driver that runs it directly (SQLite's synchronous commit path). */
  readonly sql: string;
  private readonly slots: ({ name: keyof P } | { value: unknown })[];

  constructor(db: Kysely<any>, names: readonly (keyof P & string)[], build: (params: Placeholders<P>) => Compilable<Row>) {
    const token = `\u0000param:${Math.random().toString(36).slice(2)}:`;
    const placeholders = Object.fromEntries(names.map((name) => [name, `${token}${name}`])) as unknown as Placeholders<P>;
    const compiled = build(placeholders).compile();
    this.sql = compiled.sql;
    this.slots = compiled.parameters.map((value) =>
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- it narrows a string to the statement's parameter names, which the rule cannot see.
      typeof value === 'string' && value.startsWith(token) ? { name: value.slice(token.length) as keyof P } : { value },
    );
    const used = new Set(this.slots.flatMap((slot) => ('name' in slot ? [slot.name] : [])));
    for (const name of names) if (!used.has(name)) throw new Error(`PreparedQuery: parameter ${name} is not used by the query`);
  }

  /** The parameter list for `sql`, in its order. */
  parameters(params: P): unknown[] {
    return this.slots.map((slot) => ('name' in slot ? params[slot.name] : slot.value));
  }

  /**
   * Runs on the database outside any transaction. On SQLite, when no transaction is open on the
   * connection (which would make the statement see its uncommitted rows), it runs on the driver
   * directly (dialects/sqlite/direct-statements.ts); otherwise through Kysely, which waits for it.
   * On PostgreSQL, as a named prepared statement on a pool connection (dialects/postgres/direct-statements.ts).
   */
  run(db: Db, params: P): Promise<Row[]> {
    if (db.postgres !== null) return runPooled(db.postgres, this.sql, this.parameters(params)) as Promise<Row[]>;
    if (db.sqlite !== null && !db.sqlite.inTransaction) {
      try {
        return Promise.resolve(runDirect(db.sqlite, this.sql, this.parameters(params)) as Row[]);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.execute(db.kysely, params);
  }

  /** Runs on the database or inside a transaction (a Transaction is a Kysely too). */
  async execute(db: Kysely<any>, params: P): Promise<Row[]> {
    const parameters = this.parameters(params);
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc needs it (without it: TS2322, the rows are unknown[]).
    const result = await db.executeQuery(CompiledQuery.raw(this.sql, parameters) as CompiledQuery<Row>);
    return result.rows;
  }
}

/** One statement of a unit of work written as a generator, and its parameters; the runner answers its rows. */
export interface Step {
  query: PreparedQuery<any, any>;
  params: Record<string, unknown>;
}

/**
 * Runs a unit of work written as a generator of steps through Kysely, awaiting each statement
 * (PostgreSQL, or any transaction). SQLite's search commit runs the same generators synchronously.
 */
export async function runSteps<R>(db: Kysely<any>, steps: Generator<Step, R, unknown[]>): Promise<R> {
  let next = steps.next();
  while (!next.done) next = steps.next(await next.value.query.execute(db, next.value.params));
  return next.value;
}
