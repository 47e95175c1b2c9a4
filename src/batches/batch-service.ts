import { createHash } from 'node:crypto';
import type { Batch, BatchItem } from '../domain/batch.ts';
import { newId } from '../domain/ids.ts';
import { canSearch, type SearchPrincipal } from '../domain/principal.ts';
import { decodeCursor, type Page } from '../domain/watch.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { itemsFromCsv, itemsFromJson, type BatchInputResult } from './batch-input.ts';

/** The largest page of `GET /api/v1/batches`. */
export const MAX_BATCHES_PAGE = 100;
/** Items read from storage at a time while results are streamed. */
const RESULTS_PAGE = 200;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** A batch's body as it arrived: JSON, or the text of a CSV. */
export type BatchBody = { kind: 'json'; body: unknown } | { kind: 'csv'; text: string };

export type CreateBatchOutcome =
  | { kind: 'created'; batch: Batch }
  /** The same Idempotency-Key with the same items: the batch made then. */
  | { kind: 'replayed'; batch: Batch }
  | { kind: 'idempotency_conflict'; batchId: string }
  | { kind: 'invalid'; field: string; messages: string[] };

/** The account page's upload: with one of the account's tokens, whose searches the items become. */
export type CreateForTokenOutcome = CreateBatchOutcome | { kind: 'no_token' } | { kind: 'subscription_required' };

export type ListBatchesOutcome = { kind: 'page'; page: Page<Batch> } | { kind: 'bad-cursor' };

export interface BatchServiceOptions {
  repos: Repositories;
  now: () => Date;
  /** Called when a batch was stored, so that the runner starts on it at once. */
  onCreated?: () => void;
}

/**
 * Batches as the customer sees them (contract, "Batches"): made from a JSON or CSV body, read,
 * listed, and their results in input order. The items run in the background (batch-runner.ts).
 */
export class BatchService {
  constructor(private readonly options: BatchServiceOptions) {}

  async create(principal: SearchPrincipal, body: BatchBody, rawIdempotencyKey: string | undefined): Promise<CreateBatchOutcome> {
    const key = rawIdempotencyKey?.trim();
    if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) return { kind: 'invalid', field: 'Idempotency-Key', messages: ['The Idempotency-Key header must be 1 to 255 visible ASCII characters.'] };
    const input: BatchInputResult = body.kind === 'json' ? itemsFromJson(body.body) : itemsFromCsv(body.text);
    if (!input.ok) return { kind: 'invalid', field: input.field, messages: input.messages };
    // The items as read, whichever form they came in: the same list is the same batch. The same
    // text is what the items are stored from.
    const itemsJson = JSON.stringify(input.items);
    const result = await this.options.repos.batches.create({
      id: newId('bat'),
      accountId: principal.accountId,
      tokenId: principal.tokenId,
      items: input.items,
      itemsJson,
      idempotencyKey: key ?? null,
      bodyHash: createHash('sha256').update(itemsJson).digest('hex'),
      at: this.options.now().toISOString(),
    });
    if (result.kind === 'exists') return result.sameBody ? { kind: 'replayed', batch: result.batch } : { kind: 'idempotency_conflict', batchId: result.batch.id };
    this.options.onCreated?.();
    return { kind: 'created', batch: result.batch };
  }

  /**
   * A batch from the account page: its items become the searches of the token chosen there (a
   * token of the account that works now); the same checks as the API's otherwise.
   */
  async createForToken(accountId: string, tokenId: string, body: BatchBody): Promise<CreateForTokenOutcome> {
    const principal = await this.options.repos.tokens.reload(tokenId, this.options.now());
    if (principal === null || principal.accountId !== accountId) return { kind: 'no_token' };
    if (!canSearch(principal)) return { kind: 'subscription_required' };
    return this.create(principal, body, undefined);
  }

  find(accountId: string, id: string): Promise<Batch | undefined> {
    return this.options.repos.batches.find(accountId, id);
  }

  async list(accountId: string, options: { limit: number; cursor?: string | undefined }): Promise<ListBatchesOutcome> {
    const after = options.cursor === undefined ? null : decodeCursor(options.cursor);
    if (options.cursor !== undefined && after === null) return { kind: 'bad-cursor' };
    return { kind: 'page', page: await this.options.repos.batches.list(accountId, { limit: Math.min(options.limit, MAX_BATCHES_PAGE), after }) };
  }

  /** Every item of the batch in input order, read a page at a time as the caller consumes them. */
  async *items(batchId: string): AsyncGenerator<BatchItem> {
    for (let from = 0; ; from += RESULTS_PAGE) {
      const page = await this.options.repos.batches.items(batchId, from, RESULTS_PAGE);
      yield* page;
      if (page.length < RESULTS_PAGE) return;
    }
  }

  /** The found items' report ids, in input order (the ZIP of their PDFs). */
  reportIds(batchId: string): Promise<{ index: number; reportId: string }[]> {
    return this.options.repos.batches.reportIds(batchId);
  }

  /** Batch items of the account finished in the period: the usage page shows them. */
  itemsInPeriod(accountId: string, start: Date, end: Date): Promise<number> {
    return this.options.repos.batches.itemsFinishedBetween(accountId, start.toISOString(), end.toISOString());
  }
}
