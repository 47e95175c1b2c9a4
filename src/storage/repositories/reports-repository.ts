import type { Db } from '../database.ts';
import type { Lot } from '../../domain/lot.ts';

export interface StoredReport {
  id: string;
  accountId: string;
  vin: string;
  createdAt: string;
  lots: Lot[];
}

export class ReportsRepository {
  constructor(private readonly db: Db) {}

  async findById(id: string): Promise<StoredReport | undefined> {
    const row = await this.db.kysely.selectFrom('reports').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return undefined;
    return { id: row.id, accountId: row.account_id, vin: row.vin, createdAt: row.created_at, lots: JSON.parse(row.lots) };
  }

  async countForAccount(accountId: string): Promise<number> {
    const row = await this.db.kysely
      .selectFrom('reports')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
