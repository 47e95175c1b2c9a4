import type { Db } from '../db/database.ts';
import { compareLotsNewestFirst, type Lot } from '../domain/lot.ts';
import { lotFromRow, mergeLot, rowFromLot } from './lot-rows.ts';

export interface UpsertSummary {
  inserted: number;
  updated: number;
  unchanged: number;
}

export class LotsRepository {
  constructor(private readonly db: Db) {}

  /** Every lot of a vehicle, newest sale first. One probe of lots_vin_idx. */
  async findByVin(vin: string): Promise<Lot[]> {
    const rows = await this.db.kysely.selectFrom('lots').selectAll().where('vin', '=', vin).execute();
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
   * Upserts one batch by (auction, lot_id) in one transaction, following mergeLot's rule.
   * A batch may name the same lot twice; the later line wins, as if the lines were loaded in turn.
   */
  async upsertBatch(lots: Lot[], now = new Date()): Promise<UpsertSummary> {
    const summary: UpsertSummary = { inserted: 0, updated: 0, unchanged: 0 };
    if (lots.length === 0) return summary;
    const at = now.toISOString();
    await this.db.kysely.transaction().execute(async (trx) => {
      const keyOf = (lot: { auction: string; lot_id: number }) => `${lot.auction}\u0000${lot.lot_id}`;
      const known = new Map<string, Lot>();
      const CHUNK = 400; // keeps the parameter count below SQLite's and PostgreSQL's limits
      for (let i = 0; i < lots.length; i += CHUNK) {
        const chunk = lots.slice(i, i + CHUNK);
        const rows = await trx
          .selectFrom('lots')
          .selectAll()
          .where((eb) =>
            eb(
              eb.refTuple('auction', 'lot_id'),
              'in',
              chunk.map((lot) => eb.tuple(lot.auction, lot.lot_id)),
            ),
          )
          .execute();
        for (const row of rows) known.set(keyOf(row), lotFromRow(row));
      }
      for (const lot of lots) {
        const key = keyOf(lot);
        const stored = known.get(key);
        if (!stored) {
          await trx.insertInto('lots').values(rowFromLot(lot, at)).execute();
          known.set(key, lot);
          summary.inserted++;
          continue;
        }
        const merged = mergeLot(stored, lot);
        if (!merged) {
          summary.unchanged++;
          continue;
        }
        const { created_at: _created, ...changes } = rowFromLot(merged, at);
        await trx
          .updateTable('lots')
          .set(changes)
          .where('auction', '=', lot.auction)
          .where('lot_id', '=', lot.lot_id)
          .execute();
        known.set(key, merged);
        summary.updated++;
      }
    });
    return summary;
  }
}
