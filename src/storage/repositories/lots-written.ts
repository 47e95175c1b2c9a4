import type { Lot } from '../../domain/lot.ts';
import type { LotUpsertStatus } from '../lot-rows.ts';
import type { MediaRepository } from './media-repository.ts';
import type { WatchesRepository } from './watches-repository.ts';
import type { WebhookOutboxRepository } from './webhook-outbox-repository.ts';

/**
 * What a room may read and write inside an import batch's transaction: the repositories of the
 * tables it touches there, bound to that transaction, so that what it writes commits or rolls back
 * with the lots.
 */
export interface LotsTransaction {
  /** The batch's moment, ISO. */
  readonly at: string;
  /** What brought the batch (lot history: a file's or feed's name, `admin-api:<token name>`, `demo`). */
  readonly source: string;
  readonly watches: WatchesRepository;
  readonly webhookOutbox: WebhookOutboxRepository;
  readonly media: MediaRepository;
  /** The stored lots of these keys, as the transaction sees them now. */
  findLots(keys: readonly { auction: string; lotId: number }[]): Promise<Lot[]>;
}

/** The batch as written: its lots and what the upsert did to each, in the same order. */
export interface WrittenLots {
  readonly lots: readonly Lot[];
  readonly statuses: readonly LotUpsertStatus[];
}

/** What a hook does once the batch is written, in its transaction; `events`: webhook events it wrote. */
export type AfterLotsWritten = (written: WrittenLots) => Promise<{ events?: number } | void>;

/**
 * The lots repository's one door for rooms that take part in storing lots (the webhooks' lot
 * events, the photo archive's queue), so that their rules stay in their rooms and storage imports
 * none of them. The container wires the hooks (container.ts, lotsWrittenHooks).
 */
export interface LotsWrittenHook {
  /**
   * Called in the batch's transaction before its upsert, with the lots coming in: reads what it
   * needs of the lots as they were, and answers what to do once they are written (null: nothing).
   */
  beforeWrite(tx: LotsTransaction, lots: readonly Lot[]): Promise<AfterLotsWritten | null>;
}
