import pg from 'pg';
import {
  DEFAULT_MIGRATION_LOCK_TABLE,
  DEFAULT_MIGRATION_TABLE,
  PostgresDialect,
  PostgresIntrospector,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';

export interface PostgresOptions {
  url: string;
  /** Schema to work in; tests use one per suite so that they can run side by side. */
  schema?: string;
  maxConnections?: number;
  /**
   * lock_timeout of every connection: how long a statement waits for a row or table lock held by
   * another transaction before it fails with lock_not_available (55P03). 5 s unless given, as
   * SQLite's busy timeout; 0 waits forever.
   */
  lockTimeoutMs?: number;
}

/** The SQLite busy timeout's default, so that both databases give up on a held lock alike. */
export const DEFAULT_LOCK_TIMEOUT_MS = 5000;

export function openPostgres(options: PostgresOptions): { dialect: PostgresDialect; pool: pg.Pool } {
  // Set at connection start (startup options), so that no statement ever runs without it. Without
  // it a request waiting on a row another transaction holds (an import's batch, a stuck session)
  // would hang for as long as that transaction lives; with it, it fails as "busy" (503, retry).
  // No statement_timeout: a bulk import's batch may rightly run long, and a query that merely
  // works is not the fault this guards against.
  const settings = [`-c lock_timeout=${Math.max(0, Math.trunc(options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS))}`];
  if (options.schema) settings.push(`-c search_path=${options.schema}`);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    // A dead database must fail requests quickly rather than hang them.
    connectionTimeoutMillis: 5000,
    options: settings.join(' '),
    // Statements sent on a connection without waiting for the one before go out at once and are
    // answered in order (the search commit sends a batch's statements so: commits.ts). A caller
    // that awaits each statement, as Kysely does, sees no difference.
    pipeline: true,
  });
  return { dialect: new CurrentSchemaPostgresDialect({ pool }), pool };
}

/**
 * Kysely's dialect, but its introspection (what the migrator asks before every migration run: do
 * its two tables exist?) reads the current schema's tables only. Kysely's own reads every column of
 * every table of every schema the role may use, a cost that grows with the database's other
 * schemas (other deployments, one per test file while the suite runs) and that failed when another
 * schema was dropped during the read.
 */
class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}

interface ColumnRow {
  table: string;
  table_type: string;
  schema: string;
  column: string;
  not_null: boolean;
  has_default: boolean;
  type: string;
  type_schema: string;
  column_description: string | null;
  auto_incrementing: string | null;
}

/** The metadata Kysely's PostgresIntrospector gives, of the tables and views of current_schema(). */
class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  getSchemas(): Promise<SchemaMetadata[]> {
    return new PostgresIntrospector(this.db).getSchemas();
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select c.relname as table, c.relkind as table_type, ns.nspname as schema, a.attname as column,
        a.attnotnull as not_null, a.atthasdef as has_default, typ.typname as type, dtns.nspname as type_schema,
        col_description(a.attrelid, a.attnum) as column_description,
        pg_get_serial_sequence(quote_ident(ns.nspname) || '.' || quote_ident(c.relname), a.attname) as auto_incrementing
      from pg_catalog.pg_attribute a
        join pg_catalog.pg_class c on c.oid = a.attrelid
        join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
        join pg_catalog.pg_type typ on typ.oid = a.atttypid
        join pg_catalog.pg_namespace dtns on dtns.oid = typ.typnamespace
      where ns.nspname = current_schema() and c.relkind in ('r', 'v', 'p') and a.attnum >= 0 and not a.attisdropped
        and (${options.withInternalKyselyTables} or c.relname not in (${DEFAULT_MIGRATION_TABLE}, ${DEFAULT_MIGRATION_LOCK_TABLE}))
      order by c.relname, a.attnum`.execute(this.db);
    const tables = new Map<string, { name: string; isView: boolean; schema: string; columns: TableMetadata['columns'][number][] }>();
    for (const row of rows) {
      let table = tables.get(row.table);
      if (!table) {
        table = { name: row.table, isView: row.table_type === 'v', schema: row.schema, columns: [] };
        tables.set(row.table, table);
      }
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isAutoIncrementing: row.auto_incrementing !== null,
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default,
        ...(row.column_description !== null ? { comment: row.column_description } : {}),
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}

export function isPostgresUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '23505';
}

/**
 * The database is contended, not broken: lock_not_available (lock_timeout), serialization_failure
 * and deadlock_detected. A retry a moment later is expected to succeed.
 */
export function isPostgresBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '55P03' || code === '40001' || code === '40P01';
}
