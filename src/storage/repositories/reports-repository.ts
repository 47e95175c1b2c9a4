import type { PreparedQuery } from '../prepared-query.ts';
import type { LedgerStatements, NewReport } from '../ledger-statements.ts';
import type { Db } from '../database.ts';
import type { StoredReport } from '../../domain/report.ts';
import type { LotChanges } from '../../domain/lot-history.ts';
import type { LotJson } from '../../domain/lot.ts';
import { namedLotJson, namedLotsOf, type NamedLot } from '../../domain/report-snapshot.ts';
import { lotFromRow } from '../lot-rows.ts';
import { historyKey } from './lot-history-repository.ts';

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
    const named = namedLotsOf(row.lots);
    const lotsJson = named === null ? row.lots : `[${(await this.namedLots(named)).join(',')}]`;
    const report: StoredReport = {
      id: row.id,
      accountId: row.account_id,
      vin: row.vin,
      createdAt: row.created_at,
      lots: JSON.parse(lotsJson) as StoredReport['lots'],
      sandbox: row.sandbox === 1,
      tokenId: row.token_id,
    };
    if (named) report.namedVersions = new Map(named.map((lot) => [historyKey(lot.auction, lot.lot_id), lot.versions]));
    return report;
  }

  /** The snapshot's lots as JSON text: the bytes the search answered, for its signature. */
  async lotsJsonOf(id: string): Promise<string | undefined> {
    const row = await this.db.kysely.selectFrom('reports').select('lots').where('id', '=', id).executeTakeFirst();
    return row && this.snapshotJson(row.lots);
  }

  /** A stored snapshot's lots as the JSON array the search answered: a copy as it is, named versions rebuilt. */
  async snapshotJson(snapshot: string): Promise<string> {
    const named = namedLotsOf(snapshot);
    return named === null ? snapshot : `[${(await this.namedLots(named)).join(',')}]`;
  }

  /**
   * The lots of a stored snapshot as their JSON text, each as the search read it: a named lot is its
   * state now with the versions appended since undone (domain/report-snapshot.ts). Lots are never
   * deleted; a named lot that is not found is a broken invariant, not a report to show without it.
   */
  async lotsOfSnapshot(snapshot: string): Promise<LotJson[]> {
    const named = namedLotsOf(snapshot);
    if (named === null) return (JSON.parse(snapshot) as unknown[]).map((lot) => JSON.stringify(lot) as LotJson);
    return this.namedLots(named);
  }

  /** The lots a snapshot names, rebuilt (lotsOfSnapshot), from its names read once. */
  private async namedLots(named: readonly NamedLot[]): Promise<LotJson[]> {
    const lots: LotJson[] = [];
    for (const lot of named) {
      const ref = { auction: lot.auction, lotId: lot.lot_id };
      const row = await this.db.kysely.selectFrom('lots').selectAll().where('auction', '=', ref.auction).where('lot_id', '=', ref.lotId).executeTakeFirst();
      if (!row) throw new Error(`a report names lot ${lot.auction}/${lot.lot_id}, which is not stored: lots are never deleted`);
      const changes = (await this.db.dialect.versionsInAppendOrder(this.db.kysely, ref)).map((text) => JSON.parse(text) as LotChanges);
      lots.push(namedLotJson(lot, { lot: lotFromRow(row), changes }));
    }
    return lots;
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
