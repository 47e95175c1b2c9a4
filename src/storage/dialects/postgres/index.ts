import { Kysely, sql, type RawBuilder } from 'kysely';
import { catalogueYearPostgres } from './catalogue-order.ts';
import { comparablesJsonPostgres } from './market-rows.ts';
import type pg from 'pg';
import type { Lot } from '../../../domain/lot.ts';
import type { LotRef } from '../../../domain/lot-ref.ts';
import type { LotUpsertStatus } from '../../lot-rows.ts';
import { PreparedQuery } from '../../prepared-query.ts';
import type { Database, LotRow, MailQueueRow, WebhookOutboxRow } from '../../schema.ts';
import type { BatchRow } from '../../schema.ts';
import type { BatchClaim } from '../dialect.ts';
import { claimBatchesPostgres } from './batch-claims.ts';
import { storeBatchPostgres } from './batch-items.ts';
import type { SearchCommit } from '../../search-commit.ts';
import type { ClaimedRow, ClaimOptions, EventClaim, IndexDefinition, LotJsonRow, LotUpdate, MailClaim, QueuedUrl, LotVersionRow, StorageDialect, StoredLotJson } from '../dialect.ts';
import { lockAccountPostgres } from './account-lock.ts';
import { insertAttemptsPostgres } from './auth-attempts.ts';
import { BatchedReads } from './batched-reads.ts';
import { isPostgresUniqueViolation, openPostgres } from './connection.ts';
import { runKeptPooled, runPooled } from './direct-statements.ts';
import { lotJsonOfRowPostgres, lotsJsonByVinsPostgres } from './lot-json.ts';
import { appendVersionsPostgres, lotRowsByKeyPostgres, sightLotsPostgres, storedLotsByKeyPostgres, touchLotsPostgres } from './lot-history.ts';
import { versionsInAppendOrderPostgres } from './report-snapshot.ts';
import { updateLotsPostgres, upsertLotsPostgres } from './lots-upsert.ts';
import { buildIndexPostgres, indexExistsPostgres, secondaryLotsIndexesPostgres } from './lots-indexes.ts';
import { claimMailPostgres } from './mail-claim.ts';
import { archivedMediaByUrl, claimMediaImages, enqueueMediaUrls } from './media-queue.ts';
import { PostgresSearchCommit } from './search-commit.ts';
import { claimDueEventsPostgres } from './webhook-claims.ts';

export interface OpenPostgresStorageOptions {
  url: string;
  /** The schema to use (created if missing). */
  schema?: string;
  lockTimeoutMs?: number;
  maxConnections?: number;
}

/** PostgreSQL's side of the storage dialect: Kysely's pool, shared by any number of instances. */
export class PostgresStorageDialect implements StorageDialect {
  readonly name = 'postgres' as const;
  private commit: SearchCommit | null = null;

  constructor(
    private readonly kysely: Kysely<Database>,
    /** Kysely's own pool, for statements run on a connection of it directly. */
    readonly pool: pg.Pool,
  ) {}

  isUniqueViolation(error: unknown): boolean {
    return isPostgresUniqueViolation(error);
  }

  /**
   * The current schema: Kysely otherwise looks for its bookkeeping tables in every schema of the
   * database (database.ts, createMigrator).
   */
  async migrationTableSchema(kysely: Kysely<Database>): Promise<string | undefined> {
    const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(kysely);
    return rows[0]?.schema ?? undefined;
  }

  async close(): Promise<void> {
    await this.kysely.destroy();
  }

  /** Always as a named prepared statement on a pool connection, outside the caller's transaction. */
  runPrepared(sql: string, parameters: unknown[]): Promise<unknown[]> {
    return runPooled(this.pool, sql, parameters);
  }

  /** A named statement for the first texts of an open-ended family only (runKeptPooled); the owner keeps nothing here. */
  runKept(_owner: object, sql: string, parameters: unknown[]): Promise<unknown[]> | null {
    return runKeptPooled(this.pool, sql, parameters);
  }

  /** The lots of the VINs asked for in one turn of the event loop, in one statement. */
  readonly catalogueYear = catalogueYearPostgres;
  readonly comparablesJson = comparablesJsonPostgres;
  readonly lotJson = lotJsonOfRowPostgres;

  lotsJsonReader(kysely: Kysely<Database>): (vin: string) => Promise<LotJsonRow[]> {
    const jsonByVins = new PreparedQuery(kysely, ['vins'], (p: { vins: string[] }) => lotsJsonByVinsPostgres(kysely, p.vins));
    const target = { kysely, dialect: this };
    const batched = new BatchedReads<LotJsonRow>((vins) => jsonByVins.run(target, { vins }), (row) => row.vin);
    return (vin) => batched.read(vin);
  }

  upsertLots(kysely: Kysely<Database>, lots: readonly Lot[], at: string, source: string): Promise<LotUpsertStatus[]> {
    return upsertLotsPostgres(kysely, lots, at, source);
  }

  updateLots(kysely: Kysely<Database>, updates: readonly LotUpdate[], at: string, source: string): Promise<void> {
    return updateLotsPostgres(kysely, updates, at, source);
  }

  // Lot history (lot-history.ts).
  versionsInAppendOrder(kysely: Kysely<Database>, ref: LotRef): Promise<string[]> {
    return versionsInAppendOrderPostgres(kysely, ref);
  }

  lotRowsByKey(kysely: Kysely<Database>, keys: readonly LotRef[]): Promise<LotRow[]> {
    return lotRowsByKeyPostgres(kysely, keys);
  }

  storedLotsByKey(kysely: Kysely<Database>, keys: readonly LotRef[]): Promise<StoredLotJson[]> {
    return storedLotsByKeyPostgres(kysely, keys);
  }

  touchLots(kysely: Kysely<Database>, keys: readonly LotRef[], at: string): Promise<void> {
    return touchLotsPostgres(kysely, keys, at);
  }

  sightLots(kysely: Kysely<Database>, keys: readonly LotRef[], at: string): Promise<void> {
    return sightLotsPostgres(kysely, keys, at);
  }

  /**
   * None: a probe a lot would be a round trip a lot; the batch's one read of the stored lots
   * (storedLotsByKey, FOR UPDATE) and planBatch's comparison find what changes.
   */
  async writeKnownLots(): Promise<null> {
    return null;
  }

  appendVersions(kysely: Kysely<Database>, versions: readonly LotVersionRow[]): Promise<void> {
    return appendVersionsPostgres(kysely, versions);
  }

  /** Nothing: PostgreSQL loads in bulk with its settings as they are. */
  async tuneForBulkLoad(): Promise<void> {}

  secondaryLotsIndexes(kysely: Kysely<Database>): Promise<IndexDefinition[]> {
    return secondaryLotsIndexesPostgres(kysely);
  }

  indexExists(kysely: Kysely<Database>, name: string): Promise<boolean> {
    return indexExistsPostgres(kysely, name);
  }

  buildIndex(kysely: Kysely<Database>, definition: string): Promise<void> {
    return buildIndexPostgres(kysely, definition);
  }

  bulkWriter(): null {
    return null;
  }

  /** No write gate: row locks, no single writer lock. */
  searchCommitWaits(): null {
    return null;
  }

  searchCommit(): SearchCommit {
    this.commit ??= new PostgresSearchCommit(this.kysely, this.pool);
    return this.commit;
  }

  claimMail(kysely: Kysely<Database>, claim: MailClaim): Promise<MailQueueRow[]> {
    return claimMailPostgres(kysely, claim);
  }

  claimWebhookEvents(kysely: Kysely<Database>, claim: EventClaim): Promise<WebhookOutboxRow[]> {
    return claimDueEventsPostgres(kysely, claim);
  }

  enqueueMediaUrls(kysely: Kysely<Database>, urls: readonly QueuedUrl[], at: string): Promise<number> {
    return enqueueMediaUrls(kysely, urls, at);
  }

  claimMediaImages(kysely: Kysely<Database>, options: ClaimOptions): Promise<ClaimedRow[]> {
    return claimMediaImages(kysely, options);
  }

  archivedMediaByUrl(kysely: Kysely<Database>, urls: readonly string[]): Promise<{ url: string; hash: string; ext: string }[]> {
    return archivedMediaByUrl(kysely, urls);
  }

  insertAttempts(kysely: Kysely<Database>, insert: RawBuilder<unknown>, rows: number, lockKeys: readonly string[]): Promise<boolean> {
    return insertAttemptsPostgres(kysely, insert, rows, lockKeys);
  }

  lockAccount(trx: Kysely<Database>, accountId: string): Promise<void> {
    return lockAccountPostgres(trx, accountId);
  }
  // Batches (issue 26).
  claimBatches(kysely: Kysely<Database>, claim: BatchClaim): Promise<BatchRow[]> {
    return claimBatchesPostgres(kysely, claim);
  }

  storeBatch(kysely: Kysely<Database>, insertBatch: (kysely: Kysely<Database>) => Promise<void>, batchId: string, inputsJson: string): Promise<void> {
    return storeBatchPostgres(kysely, insertBatch, batchId, inputsJson);
  }
}

/** Opens Kysely's pool with the connection settings (connection.ts); a schema given is created first. */
export async function openPostgresStorage(options: OpenPostgresStorageOptions): Promise<{ kysely: Kysely<Database>; dialect: PostgresStorageDialect }> {
  if (options.schema) {
    // search_path only takes effect for an existing schema; create it through a plain connection.
    const bootstrap = openPostgres({ url: options.url, maxConnections: 1 });
    try {
      await bootstrap.pool.query(`create schema if not exists "${options.schema.replace(/"/g, '')}"`);
    } finally {
      await bootstrap.pool.end();
    }
  }
  const { dialect, pool } = openPostgres({
    url: options.url,
    ...(options.schema ? { schema: options.schema } : {}),
    ...(options.lockTimeoutMs !== undefined ? { lockTimeoutMs: options.lockTimeoutMs } : {}),
    ...(options.maxConnections ? { maxConnections: options.maxConnections } : {}),
  });
  const kysely = new Kysely<Database>({ dialect });
  return { kysely, dialect: new PostgresStorageDialect(kysely, pool) };
}
