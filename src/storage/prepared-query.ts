import { CompiledQuery, type Compilable, type Kysely } from 'kysely';

type Placeholders<P> = { readonly [K in keyof P]: P[K] };

/**
 * How a dialect runs a compiled statement outside any transaction, its fastest way (each dialect's
 * index.ts: SQLite on the driver itself, PostgreSQL as a named prepared statement on a pool
 * connection); null when it cannot now, and the statement goes through Kysely.
 */
export interface DirectStatements {
  runPrepared(sql: string, parameters: unknown[]): Promise<unknown[]> | null;
  /**
   * The same for a statement of an open-ended family (the catalogue's shapes of query, which a
   * client can multiply), kept no longer than `owner`: runPrepared keeps a statement per SQL text
   * for the life of the process. null: through Kysely (a transaction is open, or the dialect
   * keeps no more of them).
   */
  runKept(owner: object, sql: string, parameters: unknown[]): Promise<unknown[]> | null;
}

/** What PreparedQuery.run needs of a database handle (storage/database.ts, Db). */
export interface PreparedQueryTarget {
  readonly kysely: Kysely<any>;
  readonly dialect: DirectStatements;
}

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
   * Runs on the database outside any transaction: the dialect's own way when it can
   * (DirectStatements), otherwise through Kysely, which waits for an open transaction (SQLite
   * runs it there when one is open on the connection, which would make the statement see its
   * uncommitted rows).
   */
  run(db: PreparedQueryTarget, params: P): Promise<Row[]> {
    const parameters = this.parameters(params);
    return (db.dialect.runPrepared(this.sql, parameters) as Promise<Row[]> | null) ?? this.executeWith(db.kysely, parameters);
  }

  /**
   * run() for one of an open-ended family of queries, each kept by its owner in a bounded cache
   * (DirectStatements.runKept): its prepared statement lives as long as this object.
   */
  runKept(db: PreparedQueryTarget, params: P): Promise<Row[]> {
    const parameters = this.parameters(params);
    return (db.dialect.runKept(this, this.sql, parameters) as Promise<Row[]> | null) ?? this.executeWith(db.kysely, parameters);
  }

  /** Runs on the database or inside a transaction (a Transaction is a Kysely too). */
  execute(db: Kysely<any>, params: P): Promise<Row[]> {
    return this.executeWith(db, this.parameters(params));
  }

  private async executeWith(db: Kysely<any>, parameters: unknown[]): Promise<Row[]> {
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
