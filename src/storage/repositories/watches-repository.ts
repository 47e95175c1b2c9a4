import { sql, type Kysely } from 'kysely';
import type { Db } from '../database.ts';
import type { Database, WatchRow } from '../schema.ts';
import { newId } from '../../domain/ids.ts';
import type { Page, PagePosition, Watch, WatchTarget } from '../../domain/watch.ts';
import { encodeCursor } from '../../domain/watch.ts';
import { subscriptionInForce } from '../subscription-in-force.ts';

function toWatch(row: WatchRow): Watch {
  return {
    id: row.id,
    accountId: row.account_id,
    vin: row.vin,
    auction: row.auction,
    lotId: row.lot_id === null ? null : Number(row.lot_id),
    createdAt: row.created_at,
  };
}

/** One watch that a stored lot may match, of an account that would receive its event. */
export interface LotWatcher {
  accountId: string;
  /** The VIN watched, or null for a watch of one lot (auction, lotId). */
  vin: string | null;
  auction: string | null;
  lotId: number | null;
}

/** VINs and lot ids per probe of the watches: 2 parameters a lot stays far below both databases' limits. */
const PROBE_CHUNK = 2000;

export type CreateWatchResult =
  | { kind: 'created'; watch: Watch }
  | { kind: 'exists'; watch: Watch }
  /** The plan in force allows `limit` watches and the account holds that many already. */
  | { kind: 'over-limit'; limit: number }
  /** No subscription in force: no plan, no watches. */
  | { kind: 'no-plan' };

export class WatchesRepository {
  constructor(private readonly db: Db) {}

  /**
   * Adds a watch within the plan's limit, or answers the account's existing watch of the same
   * target. The count and the insert share one transaction, which holds the account first (the
   * dialect's account-lock.ts), so two simultaneous requests cannot both take the last place.
   */
  async create(accountId: string, target: WatchTarget, now = new Date()): Promise<CreateWatchResult> {
    const at = now.toISOString();
    const attempt = () =>
      this.db.kysely.transaction().execute(async (trx): Promise<CreateWatchResult> => {
        await this.db.dialect.lockAccount(trx, accountId);
        const existing = await findTarget(trx, accountId, target);
        if (existing) return { kind: 'exists', watch: toWatch(existing) };
        const plan = await trx
          .selectFrom('subscriptions as s')
          .innerJoin('plans as p', 'p.code', 's.plan_code')
          .select('p.watch_limit as limit')
          .where('s.account_id', '=', accountId)
          .where(subscriptionInForce('s', at))
          .orderBy('s.started_at', 'desc')
          .executeTakeFirst();
        if (!plan) return { kind: 'no-plan' };
        const limit = Number(plan.limit);
        const { n } = await trx
          .selectFrom('watches')
          .select((eb) => eb.fn.countAll<string | number>().as('n'))
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow();
        if (Number(n) >= limit) return { kind: 'over-limit', limit };
        const row: WatchRow = {
          id: newId('wch'),
          account_id: accountId,
          vin: target.kind === 'vin' ? target.vin : null,
          auction: target.kind === 'lot' ? target.auction : null,
          lot_id: target.kind === 'lot' ? target.lotId : null,
          created_at: at,
        };
        await trx.insertInto('watches').values(row).execute();
        return { kind: 'created', watch: toWatch(row) };
      });
    try {
      return await attempt();
    } catch (error) {
      // The same target was added by a simultaneous request: answer the one that won.
      if (!this.db.isUniqueViolation(error)) throw error;
      const existing = await findTarget(this.db.kysely, accountId, target);
      if (!existing) throw error;
      return { kind: 'exists', watch: toWatch(existing) };
    }
  }

  /** The account's watches, newest first, `limit` at a time after `after`. */
  async list(accountId: string, options: { limit: number; after?: PagePosition | null }): Promise<Page<Watch>> {
    let query = this.db.kysely.selectFrom('watches').selectAll().where('account_id', '=', accountId);
    const after = options.after;
    if (after) {
      query = query.where((eb) =>
        eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]),
      );
    }
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit + 1).execute();
    const items = rows.slice(0, options.limit).map(toWatch);
    const last = items[items.length - 1];
    return { items, nextCursor: rows.length > options.limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null };
  }

  async count(accountId: string): Promise<number> {
    const { n } = await this.db.kysely
      .selectFrom('watches')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(n);
  }

  /** Removes one of the account's watches; false when the account has no watch of that id. */
  async delete(accountId: string, id: string): Promise<boolean> {
    const result = await this.db.kysely.deleteFrom('watches').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /**
   * The watches of these VINs or lot ids held by accounts with an enabled endpoint and a
   * subscription in force at `at`: one indexed probe (watches_vin_idx, watches_lot_idx) per
   * 2,000 of each. Whom a lot event goes to is the webhooks' rule (webhooks/lot-events.ts).
   */
  async watchersOf(vins: readonly string[], lotIds: readonly number[], at: string): Promise<LotWatcher[]> {
    const found: LotWatcher[] = [];
    for (let start = 0; start < Math.max(vins.length, lotIds.length); start += PROBE_CHUNK) {
      const vinChunk = vins.slice(start, start + PROBE_CHUNK);
      const lotChunk = lotIds.slice(start, start + PROBE_CHUNK);
      const rows = await this.db.kysely
        .selectFrom('watches as w')
        .innerJoin('webhook_endpoints as e', 'e.account_id', 'w.account_id')
        .select(['w.account_id', 'w.vin', 'w.auction', 'w.lot_id'])
        .where((eb) => {
          const parts = [];
          if (vinChunk.length > 0) parts.push(eb('w.vin', 'in', vinChunk));
          if (lotChunk.length > 0) parts.push(eb('w.lot_id', 'in', lotChunk));
          return eb.or(parts);
        })
        .where('e.enabled', '=', 1)
        .where((eb) =>
          eb.exists(eb.selectFrom('subscriptions as s').select(sql.lit(1).as('one')).whereRef('s.account_id', '=', 'w.account_id').where(subscriptionInForce('s', at))),
        )
        .execute();
      for (const row of rows) found.push({ accountId: row.account_id, vin: row.vin, auction: row.auction, lotId: row.lot_id === null ? null : Number(row.lot_id) });
    }
    return found;
  }
}

function findTarget(kysely: Kysely<Database>, accountId: string, target: WatchTarget): Promise<WatchRow | undefined> {
  let query = kysely.selectFrom('watches').selectAll().where('account_id', '=', accountId);
  query = target.kind === 'vin' ? query.where('vin', '=', target.vin) : query.where('auction', '=', target.auction).where('lot_id', '=', target.lotId);
  return query.executeTakeFirst();
}
