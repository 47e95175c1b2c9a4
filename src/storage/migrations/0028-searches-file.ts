import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * SQLite: the tables a counted search's commit writes move from the main file to the searches
 * file ATTACHed as `searches` (storage/dialects/sqlite/searches-file.ts; docs/decisions.md, "The
 * searches' writes in a file of their own"). PostgreSQL: nothing (row locks, no one write lock).
 *
 * In WAL mode a transaction over two files is not atomic across them (each file commits on its
 * own), so the move is two transactions, each writing one file, and safe to run again after a
 * crash between or inside them:
 *
 * 1. the searches file: its tables and indexes made if missing, each main table's rows copied
 *    with INSERT OR IGNORE (a second run copies nothing twice);
 * 2. the main file: the tables dropped, only once every row is in the searches file.
 *
 * The check at the start is which tables main still holds: none means the move is done.
 *
 * In the searches file the tables keep their foreign keys among themselves (a search's report, a
 * key's search) and lose those to main's tables (accounts, tokens, batches): SQLite cannot
 * enforce a foreign key across files. Nothing deleted those parents' rows with a cascade (an
 * account's deletion keeps its searches and reports, as the law asks; tokens are revoked, not
 * deleted; batches are kept), so no delete depended on them.
 */
/** The tables in the order their rows are copied: a foreign key's parent before its child. */
const PARENTS_FIRST = ['usage_counters', 'reports', 'searches', 'idempotency_keys', 'batch_items'];

/** A foreign key to a table that stays in main, as Kysely's schema builder writes it (0001, 0022). */
const REFERENCE_TO_MAIN = / references "(?:accounts|api_tokens|batches)" \("id"\)(?: on delete cascade)?/g;

/**
 * A main table's or index's own definition, made in the searches file: the same columns and
 * constraints as main has them (so that a migration merged late that alters the table by its
 * name alters the moved one, and the rows copy column for column), less the references to main.
 */
export function inSearchesFile(definition: string): string {
  const moved = definition
    .replace(/^create table "?(\w+)"?/i, 'create table if not exists searches."$1"')
    .replace(/^create (unique )?index "?(\w+)"?/i, (_match, unique: string | undefined, name: string) => `create ${unique ?? ''}index if not exists searches."${name}"`)
    .replace(REFERENCE_TO_MAIN, '');
  if (!/^create (table|(unique )?index) if not exists searches\./i.test(moved) || / references "(accounts|api_tokens|batches)"/i.test(moved)) {
    throw new Error(`0028 cannot move this definition to the searches file: ${definition}`);
  }
  return moved;
}

/** The tables as they were in main (0001, 0009, 0012, 0018 and 0022 together), for `down`. */
const MAIN_DDL: Record<string, readonly string[]> = {
  usage_counters: [
    'create table if not exists main."usage_counters" ("account_id" text not null references "accounts" ("id"), "period_start" text not null, "used" integer not null, constraint "usage_counters_pk" primary key ("account_id", "period_start"))',
  ],
  reports: [
    'create table if not exists main."reports" ("id" text primary key, "account_id" text not null references "accounts" ("id"), "vin" text not null, "created_at" text not null, "lots" text not null, "sandbox" integer default 0 not null, "token_id" text)',
    'create index if not exists main."reports_account_idx" on "reports" ("account_id", "created_at")',
  ],
  searches: [
    `create table if not exists main."searches" ("id" text primary key, "account_id" text not null references "accounts" ("id"), "token_id" text not null references "api_tokens" ("id"), "vin" text not null, "created_at" text not null, "outcome" text not null check (outcome in ('found', 'not_found')), "report_id" text references "reports" ("id"), "period_start" text not null, "sandbox" integer default 0 not null, "kind" text default 'search' not null check (kind in ('search', 'lot', 'catalogue', 'market', 'history')))`,
    'create index if not exists main."searches_account_idx" on "searches" ("account_id", "created_at")',
  ],
  idempotency_keys: [
    'create table if not exists main."idempotency_keys" ("account_id" text not null references "accounts" ("id"), "key" text not null, "vin" text not null, "search_id" text not null references "searches" ("id"), "created_at" text not null, constraint "idempotency_keys_pk" primary key ("account_id", "key"))',
    'create index if not exists main."idempotency_keys_created_idx" on "idempotency_keys" ("created_at")',
  ],
  batch_items: [
    'create table if not exists main."batch_items" ("batch_id" text not null references "batches" ("id"), "idx" integer not null, "input" text not null, "status" integer, "report_id" text, "report_url" text, "message" text, "finished_at" text, constraint "batch_items_pkey" primary key ("batch_id", "idx"))',
    'create index if not exists main."batch_items_finished_idx" on "batch_items" ("batch_id", "finished_at")',
  ],
};

type Schema = 'main' | 'searches';

async function definitions(db: Kysely<any>, schema: Schema): Promise<{ type: string; name: string; table: string; sql: string | null }[]> {
  const { rows } = await sql<{ type: string; name: string; table: string; sql: string | null }>`
    select type, name, tbl_name as "table", sql from ${sql.raw(schema)}.sqlite_master where type in ('table', 'index')`.execute(db);
  return rows;
}

async function columnsOf(db: Kysely<any>, schema: Schema, table: string): Promise<string> {
  const { rows } = await sql<{ name: string }>`select name from ${sql.raw(`${schema}.pragma_table_info`)}(${table})`.execute(db);
  return rows.map((row) => `"${row.name}"`).join(', ');
}

/**
 * Copies the tables `from` still holds into `to` (made first from `made`), then drops them from
 * `from`: two transactions, one file each, the drop only after the copy has committed.
 */
async function move(db: Kysely<any>, from: Schema, to: Schema, made: (table: string, present: Awaited<ReturnType<typeof definitions>>) => string[]): Promise<void> {
  const present = await definitions(db, from);
  const moving = PARENTS_FIRST.filter((table) => present.some((row) => row.type === 'table' && row.name === table));
  if (moving.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (const table of moving) {
      for (const statement of made(table, present)) await sql.raw(statement).execute(trx);
      const columns = sql.raw(await columnsOf(trx, from, table));
      await sql`insert or ignore into ${sql.raw(`${to}."${table}"`)} (${columns}) select ${columns} from ${sql.raw(`${from}."${table}"`)}`.execute(trx);
    }
  });
  await db.transaction().execute(async (trx) => {
    // Children first: with foreign keys on, dropping a parent first would delete its rows under them.
    for (const table of [...moving].reverse()) await sql`drop table ${sql.raw(`${from}."${table}"`)}`.execute(trx);
  });
}

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await move(db, 'main', 'searches', (table, present) =>
    present.filter((row) => row.table === table && row.sql !== null).sort((a, b) => (a.type === 'table' ? -1 : b.type === 'table' ? 1 : 0)).map((row) => inSearchesFile(row.sql!)),
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await move(db, 'searches', 'main', (table) => [...MAIN_DDL[table]!]);
}
