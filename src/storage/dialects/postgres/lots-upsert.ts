import { CompiledQuery, type Kysely } from 'kysely';
import type { Lot } from '../../../domain/lot.ts';
import type { LotUpdate } from '../dialect.ts';
import type { Database } from '../../schema.ts';
import { rowParams, upsertStatementSql, type LotUpsertStatus } from '../../lot-rows.ts';

/** Rows per statement: 500 x 32 parameters stays far below the protocol's 65,535. */
const ROWS_PER_STATEMENT = 500;
const statements = new Map<number, string>();

function upsertStatement(rows: number): string {
  let text = statements.get(rows);
  if (text === undefined) {
    text = upsertStatementSql({
      rows,
      placeholder: (index) => `$${index + 1}`,
      // A row the statement inserted has no xmax yet; one it updated carries this transaction's id.
      returning: '"auction", "lot_id", (xmax = 0) as inserted',
    });
    statements.set(rows, text);
  }
  return text;
}

const keyOf = (auction: string, lotId: number) => `${auction}\u0000${lotId}`;

/**
 * Multi-row statements, one round trip per 500 lots. PostgreSQL refuses to touch one row twice in
 * a statement, so a lot seen again in the batch starts a new statement; the later one then finds
 * the row the earlier one wrote, as a later line should.
 */
export async function upsertLotsPostgres(kysely: Kysely<Database>, lots: readonly Lot[], at: string, source: string): Promise<LotUpsertStatus[]> {
  const statuses: LotUpsertStatus[] = new Array<LotUpsertStatus>(lots.length).fill('unchanged');
  let start = 0;
  while (start < lots.length) {
    const positions = new Map<string, number>();
    let end = start;
    while (end < lots.length && end - start < ROWS_PER_STATEMENT) {
      const key = keyOf(lots[end]!.auction, lots[end]!.lot_id);
      if (positions.has(key)) break;
      positions.set(key, end);
      end++;
    }
    const params: unknown[] = [];
    for (let i = start; i < end; i++) params.push(...rowParams(lots[i]!, at, source));
    const { rows } = await kysely.executeQuery<{ auction: string; lot_id: number; inserted: boolean }>(
      CompiledQuery.raw(upsertStatement(end - start), params),
    );
    for (const row of rows) statuses[positions.get(keyOf(row.auction, Number(row.lot_id)))!] = row.inserted ? 'inserted' : 'updated';
    start = end;
  }
  return statuses;
}

/**
 * PostgreSQL: the changing lines go through the multi-row upsert all the same, 500 to a statement:
 * an UPDATE of only the changed columns, as SQLite's, would be a round trip a lot (or a statement
 * per set of columns built from a parameter), where SQLite's per-row statement costs no round trip.
 * The rows were read FOR UPDATE, so the upsert finds them as the plan did.
 */
export async function updateLotsPostgres(kysely: Kysely<Database>, updates: readonly LotUpdate[], at: string, source: string): Promise<void> {
  if (updates.length === 0) return;
  await upsertLotsPostgres(kysely, updates.flatMap((update) => update.lines), at, source);
}
