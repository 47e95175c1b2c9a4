import type { Lot } from '../domain/lot.ts';
import type { LotRef } from '../domain/lot-ref.ts';
import type { StoredLotHistory } from '../domain/lot-history.ts';
import type { SearchPrincipal } from '../domain/principal.ts';
import { sandboxLots, sandboxVinOfLot } from '../search/sandbox/catalogue.ts';
import type { CountedAnswer, CountedOutcome, SearchService } from '../search/search-service.ts';
import type { LotHistoryRepository } from '../storage/repositories/lot-history-repository.ts';
import { historyAsOf, historyAsOfVersions, lotHistory, type LotHistory } from './lot-history.ts';

/**
 * When the sandbox catalogue's lots are said to have been seen: the catalogue is fixed test data,
 * each lot has one version, and a fixed date keeps a sandbox answer the same from day to day.
 */
export const SANDBOX_SEEN_AT = '2026-01-01T00:00:00.000Z';

/** A lot's history (contract, "Lot history"): a counted call, about a lot the lookup by lot would take. */
export class HistoryService {
  constructor(
    private readonly options: {
      search: Pick<SearchService, 'runCountedOnLot'>;
      lotHistory: Pick<LotHistoryRepository, 'historyOf' | 'historiesOfVin'>;
    },
  ) {}

  /** GET /api/v1/lots/{auction}/{lot_id}/history: counted; a well-formed lot that is not known is a counted 404. */
  historyOfLot(principal: SearchPrincipal, raw: { auction: string; lotId: string }, rawIdempotencyKey: string | undefined): Promise<CountedOutcome<LotHistory>> {
    return this.options.search.runCountedOnLot(principal, 'history', raw, rawIdempotencyKey, async (current, lot) => {
      const stored = current.sandbox ? sandboxHistory(lot) : await this.options.lotHistory.historyOf(lot);
      return stored ? { kind: 'found', body: lotHistory(stored) } : notKnown(lot);
    });
  }

  /** The histories a report page and its PDF show (historiesForReport). */
  forReport(report: ReportMoment): Promise<Map<string, LotHistory>> {
    return historiesForReport(this.options.lotHistory, report);
  }
}

/** What of a report decides the history it shows (StoredReport). */
export interface ReportMoment {
  vin: string;
  createdAt: string;
  sandbox?: boolean;
  namedVersions?: ReadonlyMap<string, number>;
}

/**
 * The history of every stored lot of a report's vehicle as it stood when the report was made (by
 * `auction/lot_id`): a report is a snapshot, and shows the history of its time, not what was
 * learnt since. A snapshot that names its lots' versions is cut at those counts; one made before
 * (a copy) by its time. A sandbox report's lots are the catalogue's: they have none.
 */
export async function historiesForReport(repo: Pick<LotHistoryRepository, 'historiesOfVin'>, report: ReportMoment): Promise<Map<string, LotHistory>> {
  const histories = new Map<string, LotHistory>();
  if (report.sandbox) return histories;
  for (const [key, stored] of await repo.historiesOfVin(report.vin)) {
    const history = lotHistory(stored);
    const then = report.namedVersions
      ? historyAsOfVersions(history, report.namedVersions.get(key), report.createdAt)
      : historyAsOf(history, report.createdAt);
    if (then) histories.set(key, then);
  }
  return histories;
}

function notKnown(lot: LotRef): CountedAnswer<LotHistory> {
  return { kind: 'not_found', message: `No lot ${lot.lotId} at ${lot.auction} is known, so it has no history.` };
}

/** A sandbox lot's history: the catalogue's lot, seen once. */
function sandboxHistory(ref: LotRef): StoredLotHistory | null {
  const vin = sandboxVinOfLot(ref.auction, ref.lotId);
  const lot: Lot | undefined = vin === null ? undefined : sandboxLots(vin).find((l) => l.auction === ref.auction && l.lot_id === ref.lotId);
  if (!lot) return null;
  return { lot, firstSeenAt: SANDBOX_SEEN_AT, lastSeenAt: SANDBOX_SEEN_AT, firstSource: 'sandbox', laterVersions: [] };
}
