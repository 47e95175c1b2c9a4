import type { Kysely, RawBuilder } from 'kysely';
import type { Lot } from '../../domain/lot.ts';
import type { LotRef } from '../../domain/lot-ref.ts';
import type { MarketGroup } from '../../domain/market-group.ts';
import type { LotUpsertStatus } from '../lot-rows.ts';
import type { DirectStatements } from '../prepared-query.ts';
import type { BatchRow, Database, LotRow, MailQueueRow, WebhookOutboxRow } from '../schema.ts';
import type { SearchCommit } from '../search-commit.ts';

/**
 * Everything that differs between the two databases, in one interface, as Kysely has one for its
 * SQL: each side implements it in its own folder with the same file set (`sqlite/index.ts`,
 * `postgres/index.ts`, each file beside them one part of it). A repository is given the dialect of
 * its database (Db.dialect) and calls it; it never asks which one it is. Every method takes the
 * Kysely it is to run on: the database, or the transaction the caller holds.
 */

export type DialectName = 'sqlite' | 'postgres';

/** A photo URL to queue for the archive, and the host it is fetched from (media-queue.ts). */
export interface QueuedUrl {
  readonly url: string;
  readonly host: string;
}

/** A claim of due photos: who, how many, when, for how long. */
export interface ClaimOptions {
  readonly owner: string;
  readonly limit: number;
  readonly now: string;
  readonly leaseUntil: string;
  /** Hosts this claimer is already fetching from as much as it may: their images wait. */
  readonly skipHosts: readonly string[];
}

/** A photo claimed for fetching. */
export interface ClaimedRow {
  id: number;
  url: string;
  host: string;
  attempts: number;
}

/** A claim of due mail: one id per claim, when, for how long, and at most how many messages (mail-claim.ts). */
export interface MailClaim {
  claimId: string;
  now: string;
  leaseUntil: string;
  limit: number;
}

/** A claim of due webhook events (webhook-claims.ts). */
export interface EventClaim {
  owner: string;
  now: string;
  leaseUntil: string;
  limit: number;
  /** Claim this one event only (a test ping, a resend), if it is due and free. */
  eventId?: string;
}

/** A claim of unfinished batches whose lease is free or ended (batch-claims.ts). */
export interface BatchClaim {
  owner: string;
  now: string;
  leaseUntil: string;
  limit: number;
}

/** A lot as its JSON text (LotJson) with the fields that order a vehicle's lots (lot-json.ts). */
export interface LotJsonRow {
  lot: string;
  /** How many lot_versions rows the lot has, read in the same statement: what a report's snapshot names (0025). */
  versions: number;
  vin: string;
  sale_date: string | null;
  auction: string;
  lot_id: number;
}

/**
 * Where a bulk writer on a thread of its own (a feed's pull: ingest/worker/) opens a connection of
 * its own, and the gate it yields at to the process's own writes (sqlite/write-gate.ts).
 */
export interface BulkWriter {
  file: string;
  gate: SharedArrayBuffer;
  lockTimeoutMs: number;
  /** The opening connection's wal_autocheckpoint: 0 when a checkpointer thread copies the log back (the server), so the writer's commits do not. */
  walAutocheckpoint: number;
}

/** A lot version to append (lot history: lot-versions.ts). */
export interface LotVersionRow {
  auction: string;
  lot_id: number;
  observed_at: string;
  source: string;
  /** The changes, JSON text (domain/lot-history.ts, LotChanges). */
  changed: string;
}

/** An index and the statement that makes it (lots-indexes.ts): what a bulk load drops and builds again. */
export interface IndexDefinition {
  name: string;
  definition: string;
}

/**
 * SQLite: how long the searches' commits waited at the process's write gate for another writer of
 * the process (a pull's transaction) since the database was opened; subtract two to get a period's.
 */
export interface SearchCommitWaits {
  /** Search commits that entered. */
  commits: number;
  /** Of them, those that found the gate held or waited for. */
  waited: number;
  totalMs: number;
  maxMs: number;
  /** The buckets' upper bounds, ms. */
  boundsMs: readonly number[];
  /** Commits per bucket of `boundsMs`, and one more above the last bound (a wait of 0 is in the first). */
  buckets: number[];
}

/** A stored lot as an import batch compares it (lot history): its JSON text (LotJson) and its listing state. */
export interface StoredLotJson {
  auction: string;
  lot_id: number;
  /** The lot as the API's JSON text, fields in LOT_FIELDS order: equal to lotJson() of a lot with the same values. */
  lot: string;
  left_listing_at: string | null;
}

/**
 * What a dialect did itself with an import batch's lines that it checked against their stored lot
 * (writeKnownLots), per line: `same` (as stored and in its listing: only seen), `listed` (as
 * stored but out of its listing: back in it, its row's sighting moved, nothing else written),
 * `updated` (its changed fields written, its version appended), or null (not stored: the batch's
 * upsert inserts it).
 */
export type KnownLotOutcome = 'same' | 'listed' | 'updated' | null;

export interface KnownLotsWritten {
  outcomes: KnownLotOutcome[];
  /** The market groups (0026) the updated lots left or entered, each once; none when the caller bumps the epoch instead. */
  groups: MarketGroup[];
}

/**
 * A lot stored before an import batch that the batch's lines change (lot-versions.ts, planBatch):
 * the lines that change it, in order, and the lot as they leave it with the fields it changes.
 */
export interface LotUpdate {
  auction: string;
  lot_id: number;
  lines: readonly Lot[];
  /** The lot as stored before the batch. */
  stored: Lot;
  /** The lot after its lines, under the merge rule (lot-rows.ts, mergeLot). */
  merged: Lot;
  /** The fields whose value the lines change, in LOT_FIELDS order: none when they put back what was stored. */
  fields: readonly string[];
}

export interface StorageDialect extends DirectStatements {
  /** For logs, health and tests: never for a branch (docs/architecture.md). */
  readonly name: DialectName;

  // Connection (connection.ts).
  isUniqueViolation(error: unknown): boolean;
  /** The schema Kysely's migration tables live in, when the database has several (PostgreSQL); undefined: the default. */
  migrationTableSchema(kysely: Kysely<Database>): Promise<string | undefined>;
  /** Stops what the dialect runs beside the connection (SQLite's checkpointer and commit thread) and closes it. */
  close(): Promise<void>;
  /**
   * A SQLite file: where a thread of its own may store lots in bulk off the event loop. Null where
   * the batches are better stored on this handle: PostgreSQL's are I/O on the pool, which leaves
   * the event loop free while they run; an in-memory database has no second connection.
   */
  bulkWriter(): BulkWriter | null;

  /** SQLite on a file: the searches' commits' waits at the process's write gate; null where there is none. */
  searchCommitWaits(): SearchCommitWaits | null;

  // Reads. runPrepared (DirectStatements, direct-statements.ts): a compiled statement outside any transaction.
  /**
   * The reader of a vehicle's lots as their JSON text (lot-json.ts), built once per repository: on
   * SQLite one prepared probe on the driver, on PostgreSQL the reads of one event-loop turn in one
   * statement (batched-reads.ts). `kysely` is the repository's (a transaction's, perhaps).
   */
  lotsJsonReader(kysely: Kysely<Database>): (vin: string) => Promise<LotJsonRow[]>;
  /** One lot's versions (`changed` JSON) in the order they were appended (report-snapshot.ts): a named snapshot's rollback. */
  versionsInAppendOrder(kysely: Kysely<Database>, ref: LotRef): Promise<string[]>;
  /**
   * A lots row's JSON text (LotJson: byte for byte lotJson() of the lot) as a select expression
   * over the table `lots`, so that a page of many lots is spliced into its answer as the search's
   * lots are, never made into objects (lot-json.ts).
   */
  readonly lotJson: RawBuilder<string>;
  /**
   * What a market value's figures read of its comparables as one JSON text (an aggregate over
   * `lots`): one array per column of COMPARABLE_COLUMNS, in the same row order (lot-rows.ts, market-rows.ts).
   */
  readonly comparablesJson: RawBuilder<string>;
  /** The catalogue's year as its filters compare it, so that each planner reads the make's sale-date index in order (catalogue-order.ts). */
  readonly catalogueYear: RawBuilder<number>;

  // Lots (lots-upsert.ts).
  /**
   * Upserts lots by (auction, lot_id) under lot-rows.ts's merge rule; what happened to each, in
   * order. `source` is stored with a lot it inserts (what first brought it).
   */
  upsertLots(kysely: Kysely<Database>, lots: readonly Lot[], at: string, source: string): Promise<LotUpsertStatus[]>;
  /**
   * Writes what a batch's lines change in lots it read before its upsert (in its transaction, as
   * the upsert would find them), each row's sighting with it: the same rows as upsertLots of the
   * lines would leave.
   */
  updateLots(kysely: Kysely<Database>, updates: readonly LotUpdate[], at: string, source: string): Promise<void>;
  /** Settings of this connection for loading lots in bulk (the import and seed commands). */
  tuneForBulkLoad(kysely: Kysely<Database>): Promise<void>;
  /** The lots table's indexes other than its primary key and unique ones (lots-indexes.ts), in name order. */
  secondaryLotsIndexes(kysely: Kysely<Database>): Promise<IndexDefinition[]>;
  indexExists(kysely: Kysely<Database>, name: string): Promise<boolean>;
  /** Runs an index's recorded definition (inside the caller's transaction), with the memory a build of the whole table wants. */
  buildIndex(kysely: Kysely<Database>, definition: string): Promise<void>;

  // The search commit (search-commit.ts), one per database, built when first asked for.
  searchCommit(): SearchCommit;

  // Claims of queued work: mail (mail-claim.ts), webhook events (webhook-claims.ts), photos (media-queue.ts).
  claimMail(kysely: Kysely<Database>, claim: MailClaim): Promise<MailQueueRow[]>;
  claimWebhookEvents(kysely: Kysely<Database>, claim: EventClaim): Promise<WebhookOutboxRow[]>;
  /** Queues photo URLs not yet known (insert-or-ignore); how many were new. */
  enqueueMediaUrls(kysely: Kysely<Database>, urls: readonly QueuedUrl[], at: string): Promise<number>;
  claimMediaImages(kysely: Kysely<Database>, options: ClaimOptions): Promise<ClaimedRow[]>;
  archivedMediaByUrl(kysely: Kysely<Database>, urls: readonly string[]): Promise<{ url: string; hash: string; ext: string }[]>;

  // Atomic counts (auth-attempts.ts, account-lock.ts).
  /**
   * Runs the throttle's conditional insert so that counting and recording are one step across
   * connections and processes; true when every one of `rows` rows was inserted. `lockKeys` name
   * what it counts (one per subject).
   */
  insertAttempts(kysely: Kysely<Database>, insert: RawBuilder<unknown>, rows: number, lockKeys: readonly string[]): Promise<boolean>;
  /** In a transaction: holds the account's row until it ends, so a count then an insert for it cannot interleave with another's. */
  lockAccount(trx: Kysely<Database>, accountId: string): Promise<void>;

  // Lot history (lot-history.ts).
  /** The stored rows of these lots (in a batch's transaction: as its upsert will find them). */
  lotRowsByKey(kysely: Kysely<Database>, keys: readonly LotRef[]): Promise<LotRow[]>;
  /**
   * The stored lots of these keys as JSON text, in a batch's transaction as its upsert will find
   * them: what an import compares its lines with, so that a lot that comes again as it is stored
   * costs a string comparison instead of 35 columns made into an object and diffed.
   */
  storedLotsByKey(kysely: Kysely<Database>, keys: readonly LotRef[]): Promise<StoredLotJson[]>;
  /** Marks these lots seen at `at` and back in their listing, without changing what they say. */
  touchLots(kysely: Kysely<Database>, keys: readonly LotRef[], at: string): Promise<void>;
  /** Marks these lots, which a batch left unchanged and in their listing, seen at `at` in lot_sightings (0024), without writing their rows. */
  sightLots(kysely: Kysely<Database>, keys: readonly LotRef[], at: string): Promise<void>;
  /**
   * Writes, in the batch's transaction, what these lots (each its lot's only line in the batch, with
   * no derived values) change in their stored rows under the merge rule, checked and written in the
   * database: each row's changed columns, its version (`{field: {from, to}}`, the listing's coming
   * back with it) and its sighting, and the market groups it leaves or enters when `groups`; lots
   * as stored are only answered `same` (the caller records their sighting). Null where the dialect
   * leaves all of it to the batch's read of the stored lots (storedLotsByKey) and planBatch.
   */
  writeKnownLots(kysely: Kysely<Database>, lots: readonly Lot[], at: string, source: string, options: { groups: boolean }): Promise<KnownLotsWritten | null>;
  /** Appends these versions in the caller's transaction (lot-history.ts). */
  appendVersions(kysely: Kysely<Database>, versions: readonly LotVersionRow[]): Promise<void>;
  // Batches (batch-claims.ts): takes the lease of unfinished batches nobody holds (issue 26).
  claimBatches(kysely: Kysely<Database>, claim: BatchClaim): Promise<BatchRow[]>;
  /**
   * Stores a batch (`insertBatch` writes its row) and its items (batch-items.ts): `inputsJson` the
   * JSON array of their inputs, in order; item i is its element i. Neither is seen without the
   * other; how the writes are cut into transactions is the dialect's (SQLite: the row and the
   * items are in two files).
   */
  storeBatch(kysely: Kysely<Database>, insertBatch: (kysely: Kysely<Database>) => Promise<void>, batchId: string, inputsJson: string): Promise<void>;

  // Next: the catalogue and market queries and the lot history (issues that follow) add their
  // dialect-specific statements here, each as a file in both folders, beside these.
}

/** True when the error, or one it was wrapped around (`cause`), passes the test. */
export function anyCause(error: unknown, test: (error: unknown) => boolean): boolean {
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    if (test(current)) return true;
  }
  return false;
}
