import { CompiledQuery, type Kysely } from 'kysely';
import type { Db } from '../database.ts';
import type { Database } from '../schema.ts';
import { compareLotsNewestFirst, LOT_FIELDS, type Lot } from '../../domain/lot.ts';
import { lotFromRow, rowParams, upsertStatementSql } from './lot-rows.ts';
import { PreparedQuery } from '../prepared-query.ts';

export interface UpsertSummary {
  inserted: number;
  updated: number;
  unchanged: number;
}

export interface UpsertOptions {
  /**
   * Values derived for lots[i] from elsewhere than its source (the VIN decoder), by index. They
   * only fill a field that both the lot and the stored row leave unknown: a derived value never
   * replaces what a source said, in this batch or before.
   */
  derived?: ReadonlyArray<Partial<Lot> | undefined>;
}

type Status = 'inserted' | 'updated' | 'unchanged';

const SQLITE_UPSERT = upsertStatementSql({ rows: 1, placeholder: () => '?' });
const SQLITE_UPSERT_RETURNING = upsertStatementSql({ rows: 1, placeholder: () => '?', returning: 'rowid as row_id' });
/** Rows per PostgreSQL statement: 500 x 32 parameters stays far below the protocol's 65,535. */
const POSTGRES_ROWS = 500;
const postgresUpserts = new Map<number, string>();

function postgresUpsert(rows: number): string {
  let text = postgresUpserts.get(rows);
  if (text === undefined) {
    text = upsertStatementSql({
      rows,
      placeholder: (index) => `$${index + 1}`,
      // A row the statement inserted has no xmax yet; one it updated carries this transaction's id.
      returning: '"auction", "lot_id", (xmax = 0) as inserted',
    });
    postgresUpserts.set(rows, text);
  }
  return text;
}

const keyOf = (auction: string, lotId: number) => `${auction}\u0000${lotId}`;

/** Fields a derived value may fill: not the lot's identity, not its VIN, not its photos. */
const DERIVABLE = new Set<string>(LOT_FIELDS.filter((field) => !['auction', 'lot_id', 'vin', 'images'].includes(field)));

export class LotsRepository {
  /** Built once: every search runs it. */
  private readonly byVin;

  constructor(private readonly db: Db) {
    const k = db.kysely;
    this.byVin = new PreparedQuery(k, ['vin'], (p: { vin: string }) => k.selectFrom('lots').selectAll().where('vin', '=', p.vin));
  }

  /** Every lot of a vehicle, newest sale first. One probe of lots_vin_idx. */
  async findByVin(vin: string): Promise<Lot[]> {
    const rows = await this.byVin.execute(this.db.kysely, { vin });
    return rows.map(lotFromRow).sort(compareLotsNewestFirst);
  }

  async count(): Promise<number> {
    const row = await this.db.kysely
      .selectFrom('lots')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Upserts one batch by (auction, lot_id) in one transaction (or in the caller's, when this
   * repository is bound to one), following mergeLot's rule, and counts exactly what happened to
   * each lot. A batch may name the same lot twice; the later line wins, as if the lines were loaded
   * in turn. Two imports writing the same new lot at once do not fail: the second one finds it and
   * merges into it.
   */
  async upsertBatch(lots: Lot[], now = new Date(), options: UpsertOptions = {}): Promise<UpsertSummary> {
    const summary: UpsertSummary = { inserted: 0, updated: 0, unchanged: 0 };
    if (lots.length === 0) return summary;
    const at = now.toISOString();
    const write = async (kysely: Kysely<Database>) => {
      const statuses = this.db.dialect === 'sqlite' ? await upsertSqlite(kysely, lots, at) : await upsertPostgres(kysely, lots, at);
      if (options.derived) await fillDerived(kysely, lots, options.derived, statuses, at);
      for (const status of statuses) summary[status]++;
    };
    if (this.db.kysely.isTransaction) await write(this.db.kysely);
    else await this.db.kysely.transaction().execute(write);
    return summary;
  }
}

/**
 * One prepared statement per lot on the transaction's own connection: SQLite runs in-process, so a
 * row costs no round trip, and better-sqlite3 binds one row faster than a multi-row VALUES list.
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
async function upsertSqlite(kysely: Kysely<Database>, lots: Lot[], at: string): Promise<Status[]> {
  return kysely.getExecutor().provideConnection(async (connection) => {
    const statuses: Status[] = new Array(lots.length);
    const { rows } = await connection.executeQuery<{ top: number | null; last: number }>(
      CompiledQuery.raw('select max(rowid) as top, last_insert_rowid() as last from lots', []),
    );
    const top = rows[0]?.top ?? 0;
    const countersTell = (rows[0]?.last ?? 0) <= top;
    let lastInserted = BigInt(top);
    for (let i = 0; i < lots.length; i++) {
      let rowId: bigint | undefined;
      if (countersTell) {
        const result = await connection.executeQuery(CompiledQuery.raw(SQLITE_UPSERT, rowParams(lots[i]!, at)));
        if (result.numAffectedRows !== 0n) rowId = result.insertId;
      } else {
        const result = await connection.executeQuery<{ row_id: number }>(CompiledQuery.raw(SQLITE_UPSERT_RETURNING, rowParams(lots[i]!, at)));
        if (result.rows[0]) rowId = BigInt(result.rows[0].row_id);
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

/**
 * Multi-row statements, one round trip per 500 lots. PostgreSQL refuses to touch one row twice in
 * a statement, so a lot seen again in the batch starts a new statement; the later one then finds
 * the row the earlier one wrote, as a later line should.
 */
async function upsertPostgres(kysely: Kysely<Database>, lots: Lot[], at: string): Promise<Status[]> {
  const statuses: Status[] = new Array(lots.length).fill('unchanged');
  let start = 0;
  while (start < lots.length) {
    const positions = new Map<string, number>();
    let end = start;
    while (end < lots.length && end - start < POSTGRES_ROWS) {
      const key = keyOf(lots[end]!.auction, lots[end]!.lot_id);
      if (positions.has(key)) break;
      positions.set(key, end);
      end++;
    }
    const params: unknown[] = [];
    for (let i = start; i < end; i++) params.push(...rowParams(lots[i]!, at));
    const { rows } = await kysely.executeQuery<{ auction: string; lot_id: number; inserted: boolean }>(
      CompiledQuery.raw(postgresUpsert(end - start), params),
    );
    for (const row of rows) statuses[positions.get(keyOf(row.auction, Number(row.lot_id)))!] = row.inserted ? 'inserted' : 'updated';
    start = end;
  }
  return statuses;
}

/** Fills, lot by lot, the fields that are still null after the upsert with the derived values. */
async function fillDerived(
  kysely: Kysely<Database>,
  lots: Lot[],
  derived: ReadonlyArray<Partial<Lot> | undefined>,
  statuses: Status[],
  at: string,
): Promise<void> {
  for (let i = 0; i < lots.length; i++) {
    const values = derived[i];
    if (!values) continue;
    const fields = (Object.keys(values) as (keyof Lot)[]).filter(
      (field) => DERIVABLE.has(field) && values[field] !== null && values[field] !== undefined,
    );
    if (fields.length === 0) continue;
    const lot = lots[i]!;
    const result = await kysely
      .updateTable('lots')
      .set((eb) => {
        const set: Record<string, unknown> = { updated_at: at };
        for (const field of fields) set[field] = eb.fn.coalesce(eb.ref(field), eb.val(values[field]));
        return set;
      })
      .where('auction', '=', lot.auction)
      .where('lot_id', '=', lot.lot_id)
      .where((eb) => eb.or(fields.map((field) => eb(field, 'is', null))))
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0 && statuses[i] === 'unchanged') statuses[i] = 'updated';
  }
}
