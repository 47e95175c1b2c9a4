import { checkVin } from '../domain/vin.ts';
import { decodeCursor, type Page, type Watch, type WatchTarget } from '../domain/watch.ts';
import type { Repositories } from '../storage/repositories/index.ts';

export const MAX_WATCHES_PAGE = 100;
const AUCTION = /^[a-z][a-z0-9_-]{0,39}$/;
export const MAX_LOT_ID = 2_147_483_647;

/** What a customer asked to watch, as sent: a VIN, or an auction and a lot id. */
export interface WatchRequest {
  vin?: string | undefined;
  auction?: string | undefined;
  lotId?: number | undefined;
}

export type CreateWatchOutcome =
  | { kind: 'created'; watch: Watch }
  | { kind: 'exists'; watch: Watch }
  | { kind: 'invalid'; field: 'vin' | 'auction' | 'lot_id' | 'body'; messages: string[] }
  | { kind: 'over-limit'; limit: number }
  | { kind: 'no-plan' };

export type ListWatchesOutcome = { kind: 'bad-cursor' } | { kind: 'page'; page: Page<Watch> };

/**
 * Watches: the VINs and lots an account wants webhook events for, within its plan's limit. Not
 * searches: nothing here is counted against the quota.
 */
export class WatchService {
  constructor(private readonly options: { repos: Repositories; now: () => Date }) {}

  async create(accountId: string, request: WatchRequest): Promise<CreateWatchOutcome> {
    const target = targetOf(request);
    if (target.kind === 'invalid') return target;
    return this.options.repos.watches.create(accountId, target, this.options.now());
  }

  async list(accountId: string, options: { limit: number; cursor?: string | undefined }): Promise<ListWatchesOutcome> {
    const after = options.cursor === undefined ? null : decodeCursor(options.cursor);
    if (options.cursor !== undefined && after === null) return { kind: 'bad-cursor' };
    const limit = Math.min(Math.max(1, options.limit), MAX_WATCHES_PAGE);
    return { kind: 'page', page: await this.options.repos.watches.list(accountId, { limit, after }) };
  }

  count(accountId: string): Promise<number> {
    return this.options.repos.watches.count(accountId);
  }

  /** False when the account has no watch of that id (another account's is not its). */
  delete(accountId: string, id: string): Promise<boolean> {
    return this.options.repos.watches.delete(accountId, id);
  }
}

function targetOf(request: WatchRequest): WatchTarget | Extract<CreateWatchOutcome, { kind: 'invalid' }> {
  const hasVin = request.vin !== undefined;
  const hasLot = request.auction !== undefined || request.lotId !== undefined;
  if (hasVin === hasLot) {
    return { kind: 'invalid', field: 'body', messages: ['Send either "vin", or "auction" and "lot_id".'] };
  }
  if (hasVin) {
    const check = checkVin(request.vin!);
    return check.ok ? { kind: 'vin', vin: check.vin } : { kind: 'invalid', field: 'vin', messages: check.errors };
  }
  const auction = (request.auction ?? '').trim().toLowerCase();
  if (!AUCTION.test(auction)) {
    return { kind: 'invalid', field: 'auction', messages: ['auction must be a lower-case word such as "copart" or "iaai".'] };
  }
  const lotId = request.lotId;
  if (lotId === undefined || !Number.isInteger(lotId) || lotId < 1 || lotId > MAX_LOT_ID) {
    return { kind: 'invalid', field: 'lot_id', messages: [`lot_id must be a whole number from 1 to ${MAX_LOT_ID}.`] };
  }
  return { kind: 'lot', auction, lotId };
}
