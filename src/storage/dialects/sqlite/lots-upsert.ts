import type BetterSqlite3 from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import type { Lot } from '../../../domain/lot.ts';
import type { Database } from '../../schema.ts';
import { changedColumns, rowParams, upsertStatementSql, type LotUpsertStatus } from '../../lot-rows.ts';
import type { LotUpdate } from '../dialect.ts';
import { directStatement } from './direct-statements.ts';

/**
 * WAL pages after which a bulk-loading connection checkpoints (copies the WAL back into the
 * database file), instead of SQLite's default 1,000 (4 MiB). A bulk load rewrites the same index
 * pages over and over; checkpointing every 4 MiB writes each of them back again and again, and
 * took a third of an import's time. 16,384 pages bound the WAL to about 64 MiB.
 */
export const BULK_LOAD_CHECKPOINT_PAGES = 16_384;

export async function tuneSqliteForBulkLoad(kysely: Kysely<Database>): Promise<void> {
  await sql.raw(`pragma wal_autocheckpoint = ${BULK_LOAD_CHECKPOINT_PAGES}`).execute(kysely);
}

const UPSERT = upsertStatementSql({ rows: 1, placeholder: () => '?' });
const UPSERT_RETURNING = upsertStatementSql({ rows: 1, placeholder: () => '?', returning: 'rowid as row_id' });

/**
 * One prepared statement per lot on the transaction's own connection: SQLite runs in-process, so a
 * row costs no round trip, and better-sqlite3 binds one row faster than a multi-row VALUES list.
 * The statements run on better-sqlite3 itself (direct-statements.ts) while the batch holds the
 * connection through Kysely's provideConnection: through Kysely's driver each row cost a promise
 * and the connection's mutex.
 *
 * What happened to each lot is read from the statement's own counters rather than from RETURNING
 * (a result row per lot costs SQLite a fifth of the statement's time): no row changed means the
 * merge found nothing new; otherwise the connection's last inserted rowid tells an insert from an
 * update, since an upsert's DO UPDATE leaves it alone and SQLite gives each new row max(rowid) + 1,
 * above every rowid of lots seen before in this transaction (which holds the write lock). That
 * holds when the connection's last insert, before the batch, was a lot (an import's connection);
 * when it was a row of another table with a higher rowid (the server's connection also stores
 * searches), the rowid is read back with RETURNING instead.
 */
export async function upsertLotsSqlite(kysely: Kysely<Database>, raw: BetterSqlite3.Database, lots: readonly Lot[], at: string, source: string): Promise<LotUpsertStatus[]> {
  return kysely.getExecutor().provideConnection(async () => {
    const statuses: LotUpsertStatus[] = new Array<LotUpsertStatus>(lots.length);
    const first = directStatement(raw, 'select max(rowid) as top, last_insert_rowid() as last from lots').get() as { top: number | null; last: number } | undefined;
    const top = first?.top ?? 0;
    const countersTell = (first?.last ?? 0) <= top;
    const upsert = directStatement(raw, countersTell ? UPSERT : UPSERT_RETURNING);
    let lastInserted = top;
    for (let i = 0; i < lots.length; i++) {
      let rowId: number | undefined;
      if (countersTell) {
        const result = upsert.run(rowParams(lots[i]!, at, source));
        if (result.changes !== 0) rowId = Number(result.lastInsertRowid);
      } else {
        const row = upsert.get(rowParams(lots[i]!, at, source)) as { row_id: number } | undefined;
        if (row) rowId = Number(row.row_id);
      }
      if (rowId === undefined) statuses[i] = 'unchanged';
      else if (rowId > lastInserted) {
        // (A second line for a lot this batch inserted updates it: its rowid is not above the last.)
        lastInserted = rowId;
        statuses[i] = 'inserted';
      } else statuses[i] = 'updated';
    }
    return statuses;
  });
}

const updateStatements = new Map<string, string>();

function updateStatement(columns: readonly string[]): string {
  const key = columns.join(',');
  let text = updateStatements.get(key);
  if (text === undefined) {
    text = `update lots set ${columns.map((column) => `"${column}" = ?`).join(', ')} where "auction" = ? and "lot_id" = ?`;
    updateStatements.set(key, text);
  }
  return text;
}

/**
 * SQLite: each changed lot's row gets only the columns its lines change, one prepared statement
 * per set of columns (a new price: one). The upsert's DO UPDATE sets every column, and SQLite then
 * rewrites the lot's entry in each of the table's six indexes; an UPDATE of `price` touches only
 * the one index that holds it: less than half the CPU a changed lot (docs/benchmarks.md,
 * "Re-imports"). The batch's transaction holds the write lock since its BEGIN IMMEDIATE, so the
 * rows are as the batch read them and the merge worked out from them is the upsert's.
 */
export async function updateLotsSqlite(kysely: Kysely<Database>, raw: BetterSqlite3.Database, updates: readonly LotUpdate[], at: string): Promise<void> {
  if (updates.length === 0) return;
  await kysely.getExecutor().provideConnection(async () => {
    for (const update of updates) {
      const { columns, values } = changedColumns(update.fields, update.merged, at);
      values.push(update.auction, update.lot_id);
      directStatement(raw, updateStatement(columns)).run(values);
    }
  });
}
