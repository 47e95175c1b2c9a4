import { PreparedQuery } from '../prepared-query.ts';
import type { Db } from '../database.ts';
import type { StoredReport } from '../../domain/report.ts';

export type NewReport = {
  id: string;
  accountId: string;
  vin: string;
  at: string;
  /** The lots as JSON: the snapshot the report page shows. */
  lots: string;
  /** 1 for a sandbox token's report, 0 otherwise. */
  sandbox: number;
  /** The token whose search made it: its brand is the report's. */
  tokenId: string;
};

export class ReportsRepository {
  /** Run by the search commit, on either driver. */
  readonly insertReport: PreparedQuery<NewReport, unknown>;

  constructor(private readonly db: Db) {
    const k = db.kysely;
    this.insertReport = new PreparedQuery(k, ['id', 'accountId', 'vin', 'at', 'lots', 'sandbox', 'tokenId'], (p) =>
      k.insertInto('reports').values({ id: p.id, account_id: p.accountId, vin: p.vin, created_at: p.at, lots: p.lots, sandbox: p.sandbox, token_id: p.tokenId }),
    );
  }

  async findById(id: string): Promise<StoredReport | undefined> {
    const row = await this.db.kysely.selectFrom('reports').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return undefined;
    return { id: row.id, accountId: row.account_id, vin: row.vin, createdAt: row.created_at, lots: JSON.parse(row.lots) as StoredReport['lots'], sandbox: row.sandbox === 1, tokenId: row.token_id };
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
