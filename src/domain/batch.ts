/**
 * Batches (contract, "Batches (each item counted)"): up to 1,000 searches or lookups by lot sent
 * in one request and run in the background, each counted and stored like a search.
 */

/** The most items one batch holds. */
export const MAX_BATCH_ITEMS = 1000;

/** What one item asks for: a VIN, or an auction lot (as the customer wrote them; the search checks them). */
export type BatchItemInput = { vin: string } | { auction: string; lot_id: number };

export type BatchStatus = 'queued' | 'running' | 'done';

/** Finished items per HTTP status the search would have had ("200", "404", "422", "429", ...). */
export type BatchCounts = Record<string, number>;

export interface Batch {
  id: string;
  accountId: string;
  /** The token the batch was made with: its items are that token's searches. */
  tokenId: string;
  status: BatchStatus;
  total: number;
  done: number;
  counts: BatchCounts;
  createdAt: string;
  finishedAt: string | null;
}

/** What a finished item came to: the HTTP status its search would have had, and the report or the message. */
export interface BatchItemResult {
  status: number;
  /** Set when the search found lots (200). */
  reportId: string | null;
  /** The report's address as the search answered it. */
  reportUrl: string | null;
  /** The error message the search would have answered; null for a 200. */
  message: string | null;
}

/** One item of a batch and, once it ran, its result; `report` is read from the stored snapshot. */
export interface BatchItem {
  index: number;
  input: BatchItemInput;
  result: BatchItemResult | null;
  /** The stored report of a found item (its lots as the search answered them). */
  report: { vin: string; createdAt: string; lots: unknown[] } | null;
}

/** How an item names what it asked for, for a CSV row and the page. */
export function describeInput(input: BatchItemInput): string {
  return 'vin' in input ? input.vin : `${input.auction}/${input.lot_id}`;
}

/** A batch as the API answers it (GET /api/v1/batches/{id}) and the batch.completed event carries it. */
export interface BatchJson {
  id: string;
  status: BatchStatus;
  total: number;
  done: number;
  counts: BatchCounts;
  created_at: string;
  finished_at: string | null;
}

export function batchJson(batch: Batch): BatchJson {
  return { id: batch.id, status: batch.status, total: batch.total, done: batch.done, counts: batch.counts, created_at: batch.createdAt, finished_at: batch.finishedAt };
}
