import { sql, type Kysely } from 'kysely';
import type { Db } from '../database.ts';
import type { BatchRow, Database } from '../schema.ts';
import type { ReportsRepository } from './reports-repository.ts';
import type { Batch, BatchCounts, BatchItem, BatchItemInput, BatchItemResult } from '../../domain/batch.ts';
import { encodeCursor, type Page, type PagePosition } from '../../domain/watch.ts';

/** A batch to store: its items in order, the request's Idempotency-Key and the hash of its items. */
export interface NewBatch {
  id: string;
  accountId: string;
  tokenId: string;
  items: readonly BatchItemInput[];
  /** `items` as JSON text, when the caller made it already (it hashes it): what the items are stored from. */
  itemsJson?: string;
  idempotencyKey: string | null;
  bodyHash: string;
  at: string;
}

export type CreateBatchResult = { kind: 'created'; batch: Batch } | { kind: 'exists'; batch: Batch; sameBody: boolean };

/** An item the runner is to run: its place and what it asks for. */
export interface PendingItem {
  index: number;
  input: BatchItemInput;
}

/** A batch a runner took the lease of: which it is, and whose searches its items are. */
export interface ClaimedBatch {
  id: string;
  accountId: string;
  tokenId: string;
}

/** Batches and their items (0022). */
export class BatchesRepository {
  /** `reports` rebuilds a report's snapshot that names lot versions (0025). */
  constructor(
    private readonly db: Db,
    private readonly reports: Pick<ReportsRepository, 'snapshotJson'>,
  ) {}

  /**
   * Stores a batch and its items, neither seen without the other (the dialect's storeBatch). With an Idempotency-Key the account already
   * used, nothing is stored and the existing batch is answered, with whether its items were the same.
   */
  async create(batch: NewBatch): Promise<CreateBatchResult> {
    if (batch.idempotencyKey !== null) {
      const existing = await this.byKey(batch.accountId, batch.idempotencyKey);
      if (existing) return existing.bodyHash === batch.bodyHash ? { kind: 'exists', batch: existing.batch, sameBody: true } : { kind: 'exists', batch: existing.batch, sameBody: false };
    }
    try {
      const insertBatch = async (kysely: Kysely<Database>) => {
        await kysely
          .insertInto('batches')
          .values({
            id: batch.id,
            account_id: batch.accountId,
            token_id: batch.tokenId,
            status: 'queued',
            total: batch.items.length,
            idempotency_key: batch.idempotencyKey,
            body_hash: batch.bodyHash,
            created_at: batch.at,
            started_at: null,
            finished_at: null,
            lease_owner: null,
            lease_until: null,
          })
          .execute();
      };
      await this.db.dialect.storeBatch(this.db.kysely, insertBatch, batch.id, batch.itemsJson ?? JSON.stringify(batch.items));
    } catch (error) {
      // Two requests with one key at once: the one that lost answers the batch the other stored.
      if (batch.idempotencyKey === null || !this.db.isUniqueViolation(error)) throw error;
      const existing = await this.byKey(batch.accountId, batch.idempotencyKey);
      if (!existing) throw error;
      return { kind: 'exists', batch: existing.batch, sameBody: existing.bodyHash === batch.bodyHash };
    }
    return { kind: 'created', batch: { id: batch.id, accountId: batch.accountId, tokenId: batch.tokenId, status: 'queued', total: batch.items.length, done: 0, counts: {}, createdAt: batch.at, finishedAt: null } };
  }

  private async byKey(accountId: string, key: string): Promise<{ batch: Batch; bodyHash: string } | undefined> {
    const row = await this.db.kysely.selectFrom('batches').selectAll().where('account_id', '=', accountId).where('idempotency_key', '=', key).executeTakeFirst();
    if (!row) return undefined;
    return { batch: (await this.withCounts([row]))[0]!, bodyHash: row.body_hash };
  }

  /** The account's batch of this id; undefined when it has none. */
  async find(accountId: string, id: string): Promise<Batch | undefined> {
    const row = await this.db.kysely.selectFrom('batches').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
    return row ? (await this.withCounts([row]))[0] : undefined;
  }

  /** The account's batches, newest first, a page at a time. */
  async list(accountId: string, options: { limit: number; after?: PagePosition | null }): Promise<Page<Batch>> {
    let query = this.db.kysely.selectFrom('batches').selectAll().where('account_id', '=', accountId);
    const after = options.after;
    if (after) query = query.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]));
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit + 1).execute();
    const page = rows.slice(0, options.limit);
    const last = page[page.length - 1];
    return { items: await this.withCounts(page), nextCursor: rows.length > options.limit && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null };
  }

  /** Batches with their finished items counted per status, in one grouped read for the lot. */
  private async withCounts(rows: BatchRow[]): Promise<Batch[]> {
    if (rows.length === 0) return [];
    const counted = await this.db.kysely
      .selectFrom('batch_items')
      .select(['batch_id', 'status', (eb) => eb.fn.countAll<string | number>().as('n')])
      .where('batch_id', 'in', rows.map((row) => row.id))
      .where('status', 'is not', null)
      .groupBy(['batch_id', 'status'])
      .execute();
    const counts = new Map<string, BatchCounts>();
    for (const { batch_id: batchId, status, n } of counted) {
      let of = counts.get(batchId);
      if (!of) counts.set(batchId, (of = {}));
      of[String(status)] = Number(n);
    }
    return rows.map((row) => {
      const of = counts.get(row.id) ?? {};
      return {
        id: row.id,
        accountId: row.account_id,
        tokenId: row.token_id,
        status: row.status,
        total: Number(row.total),
        done: Object.values(of).reduce((sum, n) => sum + n, 0),
        counts: of,
        createdAt: row.created_at,
        finishedAt: row.finished_at,
      };
    });
  }

  /**
   * The items from `fromIndex` on, in order, `limit` of them, with their results and, for the
   * found ones, the stored report (one read joining the reports for the page).
   */
  async items(batchId: string, fromIndex: number, limit: number): Promise<BatchItem[]> {
    const rows = await this.db.kysely
      .selectFrom('batch_items as i')
      .leftJoin('reports as r', 'r.id', 'i.report_id')
      .select(['i.idx', 'i.input', 'i.status', 'i.report_id', 'i.report_url', 'i.message', 'r.vin as report_vin', 'r.created_at as report_created_at', 'r.lots as report_lots'])
      .where('i.batch_id', '=', batchId)
      .where('i.idx', '>=', fromIndex)
      .orderBy('i.idx')
      .limit(limit)
      .execute();
    const items: BatchItem[] = [];
    for (const row of rows) {
      items.push({
        index: Number(row.idx),
        input: JSON.parse(row.input) as BatchItemInput,
        result: row.status === null ? null : { status: Number(row.status), reportId: row.report_id, reportUrl: row.report_url, message: row.message },
        report:
          row.report_vin !== null && row.report_created_at !== null && row.report_lots !== null
            ? { vin: row.report_vin, createdAt: row.report_created_at, lots: JSON.parse(await this.reports.snapshotJson(row.report_lots)) as unknown[] }
            : null,
      });
    }
    return items;
  }

  /** The report ids of the batch's found items, in input order (the ZIP of PDFs). */
  async reportIds(batchId: string): Promise<{ index: number; reportId: string }[]> {
    const rows = await this.db.kysely.selectFrom('batch_items').select(['idx', 'report_id']).where('batch_id', '=', batchId).where('report_id', 'is not', null).orderBy('idx').execute();
    return rows.map((row) => ({ index: Number(row.idx), reportId: row.report_id! }));
  }

  /**
   * Takes the lease of up to `limit` unfinished batches that nobody holds (dialect: batch-claims.ts).
   * Answers what the runner needs of each, without counting their items (a grouped read of every
   * item of each batch, which the runner never looked at).
   */
  async claim(options: { owner: string; now: Date; leaseMs: number; limit: number }): Promise<ClaimedBatch[]> {
    const rows = await this.db.dialect.claimBatches(this.db.kysely, {
      owner: options.owner,
      now: options.now.toISOString(),
      leaseUntil: new Date(options.now.getTime() + options.leaseMs).toISOString(),
      limit: options.limit,
    });
    return rows.map((row) => ({ id: row.id, accountId: row.account_id, tokenId: row.token_id }));
  }

  /** Extends a lease this owner holds; false when it lost it (another runner took the batch over). */
  async renewLease(batchId: string, owner: string, leaseUntil: Date): Promise<boolean> {
    const result = await this.db.kysely
      .updateTable('batches')
      .set({ lease_until: leaseUntil.toISOString() })
      .where('id', '=', batchId)
      .where('lease_owner', '=', owner)
      .where('status', '!=', 'done')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Gives a lease up (a runner stopping), so that the next start takes the batch at once. */
  async releaseLease(batchId: string, owner: string): Promise<void> {
    await this.db.kysely.updateTable('batches').set({ lease_owner: null, lease_until: null }).where('id', '=', batchId).where('lease_owner', '=', owner).execute();
  }

  /** Items not yet run, from `fromIndex` on, in order. */
  async pendingItems(batchId: string, fromIndex: number, limit: number): Promise<PendingItem[]> {
    const rows = await this.db.kysely
      .selectFrom('batch_items')
      .select(['idx', 'input'])
      .where('batch_id', '=', batchId)
      .where('idx', '>=', fromIndex)
      .where('status', 'is', null)
      .orderBy('idx')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ index: Number(row.idx), input: JSON.parse(row.input) as BatchItemInput }));
  }

  /**
   * Writes the results of several items in one transaction (one commit for many items); each
   * only if it has none yet. Answers how many were written.
   */
  async recordItems(batchId: string, results: readonly { index: number; result: BatchItemResult }[], at: Date): Promise<number> {
    if (results.length === 0) return 0;
    const finishedAt = at.toISOString();
    return this.db.kysely.transaction().execute(async (trx) => {
      let written = 0;
      for (const { index, result } of results) {
        const update = await trx
          .updateTable('batch_items')
          .set({ status: result.status, report_id: result.reportId, report_url: result.reportUrl, message: result.message, finished_at: finishedAt })
          .where('batch_id', '=', batchId)
          .where('idx', '=', index)
          .where('status', 'is', null)
          .executeTakeFirst();
        written += Number(update.numUpdatedRows);
      }
      return written;
    });
  }

  /**
   * Marks the batch done once every item has its result; answers the batch as it ended, or null
   * when it was already done or still has items to run. In the caller's transaction when bound to
   * one (the runner writes the batch.completed event in the same one).
   */
  async finish(batchId: string, at: Date): Promise<Batch | null> {
    const finished = await this.db.kysely
      .updateTable('batches')
      .set({ status: 'done', finished_at: at.toISOString(), lease_owner: null, lease_until: null })
      .where('id', '=', batchId)
      .where('status', '!=', 'done')
      .where((eb) => eb.not(eb.exists(eb.selectFrom('batch_items').select(sql.lit(1).as('one')).where('batch_id', '=', batchId).where('status', 'is', null))))
      .returningAll()
      .execute();
    const row = finished[0];
    return row ? ((await this.withCounts([row]))[0] ?? null) : null;
  }

  /** How many batch items of the account finished in [from, to): the usage page's figure. */
  async itemsFinishedBetween(accountId: string, from: string, to: string): Promise<number> {
    const row = await this.db.kysely
      .selectFrom('batch_items as i')
      .innerJoin('batches as b', 'b.id', 'i.batch_id')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('b.account_id', '=', accountId)
      .where('i.finished_at', '>=', from)
      .where('i.finished_at', '<', to)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
