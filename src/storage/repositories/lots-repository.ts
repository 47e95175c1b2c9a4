import { sql, type Kysely } from 'kysely';
import type { NamedLot } from '../../domain/report-snapshot.ts';
import type { Db } from '../database.ts';
import type { Database } from '../schema.ts';
import { compareLotsNewestFirst, LOT_FIELDS, type Lot, type LotJson } from '../../domain/lot.ts';
import { lotFromRow, type LotUpsertStatus } from '../lot-rows.ts';
import { PreparedQuery } from '../prepared-query.ts';
import { buildDeferredIndexes, deferLotsIndexesWhileEmpty } from '../deferred-indexes.ts';
import { bumpMarketGroups, EPOCH_GROUP, marketGroupsWritten } from './market-groups.ts';
import { normaliseSource } from '../../domain/lot-history.ts';
import { batchKeys, planBatch, probeCandidates, type BatchPlan } from './lot-versions.ts';
import type { LotRef } from '../../domain/lot-ref.ts';
import type { MarketGroup } from '../../domain/market-group.ts';
import type { AfterLotsWritten, LotsTransaction, LotsWrittenHook } from './lots-written.ts';
import { MediaRepository } from './media-repository.ts';
import { WatchesRepository } from './watches-repository.ts';
import { WebhookOutboxRepository } from './webhook-outbox-repository.ts';

export interface UpsertSummary {
  inserted: number;
  updated: number;
  unchanged: number;
  /** Webhook events written to the outbox with the batch (a hook's); set only when the batch touched a watched lot. */
  events?: number;
}

/**
 * A lot on its way in, carrying what was derived for it from elsewhere than its source (the VIN
 * decoder), if anything. Derived values only fill a field that both the lot and the stored row
 * leave unknown: a derived value never replaces what a source said, in this batch or before.
 */
export type IncomingLot = Lot & { readonly derived?: Partial<Lot> | undefined };

/** How a batch is stored: when it was observed, and what brought it (lot history; domain/lot-history.ts). */
export interface UpsertOptions {
  now?: Date;
  /** A file's name, a feed's name, `admin-api:<operator token name>`, `demo`; UNNAMED_SOURCE when not given. */
  source?: string;
}

/** What the dialect wrote itself of a batch's lines (LotsRepository.writeKnownLines), by line index. */
interface KnownLines {
  handled: boolean[];
  asked: boolean[];
  updated: number[];
  sighted: LotRef[];
  groups: MarketGroup[];
}

/** Fields a derived value may fill: not the lot's identity, not its VIN, not its photos. */
const DERIVABLE = new Set<string>(LOT_FIELDS.filter((field) => !['auction', 'lot_id', 'vin', 'images'].includes(field)));

export class LotsRepository {
  /** Built once: every search runs it. */
  private readonly byVin;
  /**
   * Whether the next batch asks the database which of its lines are unchanged before reading the
   * others' stored lots (unchangedLines): while most lines of the batches before were unchanged
   * (a re-import), not while they were new (a first import, whose lines would all miss).
   */
  private probeUnchanged = true;
  private readonly jsonByVin;
  private readonly vinOfLot;
  /** Between deferIndexesWhileEmpty and buildDeferredIndexes: a first bulk load, whose batches bump the market's epoch, not their groups (market-groups.ts). */
  private bulkLoading = false;

  /**
   * `lotsWritten`: the rooms that take part in every batch's transaction, in order (lots-written.ts):
   * the photo archive's queue, the webhooks' lot events.
   */
  constructor(
    private readonly db: Db,
    private readonly options: { lotsWritten?: readonly LotsWrittenHook[] } = {},
  ) {
    const k = db.kysely;
    this.byVin = new PreparedQuery(k, ['vin'], (p: { vin: string }) => k.selectFrom('lots').selectAll().where('vin', '=', p.vin));
    this.jsonByVin = db.dialect.lotsJsonReader(k);
    this.vinOfLot = new PreparedQuery(k, ['auction', 'lotId'], (p: { auction: string; lotId: number }) =>
      k.selectFrom('lots').select('vin').where('auction', '=', p.auction).where('lot_id', '=', p.lotId),
    );
  }

  /** The VIN of one lot, or null when the lot is not known. One probe of the primary key (auction, lot_id). */
  async vinOfLotId(auction: string, lotId: number): Promise<string | null> {
    const [row] = await this.vinOfLot.run(this.db, { auction, lotId });
    return row?.vin ?? null;
  }

  /**
   * Every auction that has lots, in order. A loose index scan of the primary key: one probe per
   * auction (a handful), not a pass over the table, in both dialects (neither plans DISTINCT on a
   * leading key column that way by itself).
   */
  async auctions(): Promise<string[]> {
    const { rows } = await sql<{ auction: string | null }>`
      with recursive a(auction) as (
        select min(auction) from lots
        union all
        select (select min(auction) from lots where lots.auction > a.auction) from a where a.auction is not null
      )
      select auction from a where auction is not null`.execute(this.db.kysely);
    return rows.map((row) => row.auction!);
  }

  /** Every lot of a vehicle, newest sale first. One probe of lots_vin_idx. */
  async findByVin(vin: string): Promise<Lot[]> {
    const rows = await this.byVin.run(this.db, { vin });
    return rows.map(lotFromRow).sort(compareLotsNewestFirst);
  }

  /**
   * Every lot of a vehicle as its JSON text, newest sale first: what a search answers, spliced as
   * it is (domain/lot.ts, LotJson); and the same lots with their count of versions, which its
   * report's snapshot names (0025). One probe of lots_vin_idx, and one of lot_versions_lot_idx a lot.
   */
  async findJsonByVin(vin: string): Promise<{ lots: LotJson[]; named: NamedLot[] }> {
    const rows = await this.jsonByVin(vin);
    if (rows.length > 1) rows.sort(compareLotsNewestFirst);
    return { lots: rows.map((row) => row.lot as LotJson), named: rows.map((row) => ({ auction: row.auction, lot_id: Number(row.lot_id), versions: Number(row.versions) })) };
  }

  async count(): Promise<number> {
    const row = await this.db.kysely
      .selectFrom('lots')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Settings of this connection for loading lots in bulk (the import and seed commands). Only this
   * connection is affected: the server's keeps its defaults (the dialect's lots-upsert.ts).
   */
  tuneForBulkLoad(): Promise<void> {
    return this.db.dialect.tuneForBulkLoad(this.db.kysely);
  }

  /**
   * A bulk load into an empty table: drops the secondary indexes of lots for the load, safely
   * (deferred-indexes.ts); true when it did, and the caller then calls buildDeferredIndexes once
   * the load ends, failed or not. A table that has lots keeps its indexes.
   */
  async deferIndexesWhileEmpty(): Promise<boolean> {
    this.bulkLoading = await deferLotsIndexesWhileEmpty(this.db);
    return this.bulkLoading;
  }

  /** Builds the indexes a bulk load deferred (deferIndexesWhileEmpty). */
  async buildDeferredIndexes(): Promise<void> {
    this.bulkLoading = false;
    await buildDeferredIndexes(this.db);
  }

  /**
   * Upserts one batch by (auction, lot_id) in one transaction (or in the caller's, when this
   * repository is bound to one), following mergeLot's rule, and counts exactly what happened to
   * each lot. A batch may name the same lot twice; the later line wins, as if the lines were loaded
   * in turn. Two imports writing the same new lot at once do not fail: the second one finds it and
   * merges into it. Then the values derived for a lot fill what is still unknown.
   *
   * The hooks it was given take part in the same transaction (lots-written.ts): what they write
   * (webhook events, photos to archive) is stored before the batch commits, and never without it.
   *
   * The lot history is kept in the same transaction: each lot stored before that the batch changes
   * gets one version (what changed, from what, when, from which source: lot-versions.ts), and
   * every lot the batch names is seen (last_seen_at), changed or not: in its row when the batch
   * writes the row anyway, in lot_sightings (0024) when it leaves the lot unchanged.
   */
  async upsertBatch(lots: readonly IncomingLot[], given: UpsertOptions | Date = {}): Promise<UpsertSummary> {
    const summary: UpsertSummary = { inserted: 0, updated: 0, unchanged: 0 };
    if (lots.length === 0) return summary;
    // A bare Date is the moment alone, as callers before lot history passed it.
    const options: UpsertOptions = given instanceof Date ? { now: given } : given;
    const at = (options.now ?? new Date()).toISOString();
    const source = normaliseSource(options.source);
    const hooks = this.options.lotsWritten ?? [];
    const write = async (kysely: Kysely<Database>) => {
      const after: AfterLotsWritten[] = [];
      if (hooks.length > 0) {
        const tx = lotsTransaction({ ...this.db, kysely }, at, source);
        for (const hook of hooks) {
          const then = await hook.beforeWrite(tx, lots);
          if (then) after.push(then);
        }
      }
      const known = this.probeUnchanged ? await this.writeKnownLines(kysely, lots, at, source) : null;
      const unread = batchKeys(lots, known?.asked ?? null);
      const before = unread.length > 0 ? await this.db.dialect.storedLotsByKey(kysely, unread) : [];
      const plan = planBatch(before, lots, DERIVABLE, at, source, known?.handled ?? null);
      const statuses = await this.writeLines(kysely, lots, plan, at, source);
      if (known) for (const i of known.updated) statuses[i] = 'updated';
      await fillDerived(kysely, lots, statuses, at);
      await this.db.dialect.appendVersions(kysely, plan.versions);
      await this.db.dialect.touchLots(kysely, plan.touched, at);
      await this.db.dialect.sightLots(kysely, known ? [...plan.sighted, ...known.sighted] : plan.sighted, at);
      await bumpMarketGroups(kysely, this.bulkLoading ? [EPOCH_GROUP] : [...marketGroupsWritten(lots, before, plan), ...(known?.groups ?? [])]);
      for (const status of statuses) summary[status]++;
      this.probeUnchanged = summary.unchanged * 2 >= lots.length;
      for (const then of after) {
        const done = await then({ lots, statuses });
        if (done?.events !== undefined) summary.events = (summary.events ?? 0) + done.events;
      }
    };
    if (this.db.kysely.isTransaction) await write(this.db.kysely);
    else await this.db.kysely.transaction().execute(write);
    return summary;
  }

  /**
   * The lines the dialect checks and writes itself (lot-versions.ts, probeCandidates; the
   * dialect's writeKnownLots), versions, sightings of the rows it writes and market groups with
   * them: `handled` marks them for planBatch, `asked` also the ones not stored (planBatch sees them
   * as new, without reading them), `updated` those that count as updated, `sighted` those left as
   * stored. Null where the dialect leaves every line to planBatch.
   */
  private async writeKnownLines(kysely: Kysely<Database>, lots: readonly IncomingLot[], at: string, source: string): Promise<KnownLines | null> {
    const candidates = probeCandidates(lots);
    const written = await this.db.dialect.writeKnownLots(kysely, candidates.length === lots.length ? lots : candidates.map((i) => lots[i]!), at, source, {
      groups: !this.bulkLoading,
    });
    if (written === null) return null;
    const handled = new Array<boolean>(lots.length).fill(false);
    const asked = new Array<boolean>(lots.length).fill(false);
    const updated: number[] = [];
    const sighted: LotRef[] = [];
    for (let j = 0; j < candidates.length; j++) {
      const i = candidates[j]!;
      const outcome = written.outcomes[j]!;
      asked[i] = true;
      if (outcome === null) continue;
      handled[i] = true;
      if (outcome === 'updated') updated.push(i);
      else if (outcome === 'same') sighted.push({ auction: lots[i]!.auction, lotId: lots[i]!.lot_id });
    }
    return { handled, asked, updated, sighted, groups: written.groups };
  }

  /**
   * Writes the lines the plan says change something; the others are unchanged without a
   * statement: their upsert would have found nothing to write (its WHERE), after probing the
   * primary key and, on PostgreSQL, locking the row again (docs/decisions.md, "Re-imports"). Lines
   * of lots not stored before go through the upsert; lots stored before get what their lines
   * change (the dialect's updateLots), and each of those lines updated them.
   */
  private async writeLines(kysely: Kysely<Database>, lots: readonly IncomingLot[], plan: BatchPlan, at: string, source: string): Promise<LotUpsertStatus[]> {
    const statuses = new Array<LotUpsertStatus>(lots.length).fill('unchanged');
    const fresh: number[] = [];
    for (let i = 0; i < lots.length; i++) {
      if (!plan.write[i]) continue;
      if (plan.known[i]) statuses[i] = 'updated';
      else fresh.push(i);
    }
    if (fresh.length > 0) {
      const written = await this.db.dialect.upsertLots(kysely, fresh.length === lots.length ? lots : fresh.map((i) => lots[i]!), at, source);
      for (let j = 0; j < fresh.length; j++) statuses[fresh[j]!] = written[j]!;
    }
    await this.db.dialect.updateLots(kysely, plan.updates, at, source);
    return statuses;
  }
}

/** The repositories a hook may use, bound to the batch's transaction; built only for a batch that has hooks. */
function lotsTransaction(db: Db, at: string, source: string): LotsTransaction {
  return {
    at,
    source,
    watches: new WatchesRepository(db),
    webhookOutbox: new WebhookOutboxRepository(db),
    media: new MediaRepository(db),
    findLots: (keys) => findLots(db.kysely, keys),
  };
}

/** The stored lots of these keys: 500 keys a statement (two parameters each). */
async function findLots(kysely: Kysely<Database>, keys: readonly { auction: string; lotId: number }[]): Promise<Lot[]> {
  const lots: Lot[] = [];
  for (let start = 0; start < keys.length; start += 500) {
    const chunk = keys.slice(start, start + 500);
    const rows = await kysely
      .selectFrom('lots')
      .selectAll()
      .where((eb) => eb.or(chunk.map((key) => eb.and([eb('auction', '=', key.auction), eb('lot_id', '=', key.lotId)]))))
      .execute();
    for (const row of rows) lots.push(lotFromRow(row));
  }
  return lots;
}

/** Fills, lot by lot, the fields that are still null after the upsert with the derived values. */
async function fillDerived(kysely: Kysely<Database>, lots: readonly IncomingLot[], statuses: LotUpsertStatus[], at: string): Promise<void> {
  for (let i = 0; i < lots.length; i++) {
    const lot = lots[i]!;
    const { derived } = lot;
    if (!derived) continue;
    const fields = (Object.keys(derived) as (keyof Lot)[]).filter(
      (field) => DERIVABLE.has(field) && derived[field] !== null && derived[field] !== undefined,
    );
    if (fields.length === 0) continue;
    const result = await kysely
      .updateTable('lots')
      .set((eb) => {
        const set: Record<string, unknown> = { updated_at: at };
        for (const field of fields) set[field] = eb.fn.coalesce(eb.ref(field), eb.val(derived[field]));
        return set;
      })
      .where('auction', '=', lot.auction)
      .where('lot_id', '=', lot.lot_id)
      .where((eb) => eb.or(fields.map((field) => eb(field, 'is', null))))
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0 && statuses[i] === 'unchanged') statuses[i] = 'updated';
  }
}
