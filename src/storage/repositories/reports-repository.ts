import type { PreparedQuery } from '../prepared-query.ts';
import type { LedgerStatements, NewReport } from '../ledger-statements.ts';
import type { Db } from '../database.ts';
import type { StoredReport } from '../../domain/report.ts';

export class ReportsRepository {
  /** Run by the search commit, on either driver. */
  readonly insertReport: PreparedQuery<NewReport, unknown>;

  constructor(
    private readonly db: Db,
    ledger: LedgerStatements,
  ) {
    this.insertReport = ledger.insertReport;
  }

  async findById(id: string): Promise<StoredReport | undefined> {
    const row = await this.db.kysely.selectFrom('reports').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return undefined;
    return { id: row.id, accountId: row.account_id, vin: row.vin, createdAt: row.created_at, lots: JSON.parse(row.lots) as StoredReport['lots'], sandbox: row.sandbox === 1, tokenId: row.token_id };
  }

  /** The snapshot's lots as the stored JSON text: the bytes the search answered, for its signature. */
  async lotsJsonOf(id: string): Promise<string | undefined> {
    const row = await this.db.kysely.selectFrom('reports').select('lots').where('id', '=', id).executeTakeFirst();
    return row?.lots;
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
