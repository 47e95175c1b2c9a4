import type BetterSqlite3 from 'better-sqlite3';
import { catalogueYearSqlite } from './catalogue-order.ts';
import { comparablesJsonSqlite } from './market-rows.ts';
import { Kysely, type RawBuilder } from 'kysely';
import type { Lot } from '../../../domain/lot.ts';
import type { LotRef } from '../../../domain/lot-ref.ts';
import type { LotUpsertStatus } from '../../lot-rows.ts';
import { PreparedQuery } from '../../prepared-query.ts';
import type { Database, LotRow, MailQueueRow, WebhookOutboxRow } from '../../schema.ts';
import type { BatchRow } from '../../schema.ts';
import type { BatchClaim } from '../dialect.ts';
import { claimBatchesSqlite } from './batch-claims.ts';
import { storeBatchSqlite } from './batch-items.ts';
import type { SearchCommit } from '../../search-commit.ts';
import type { ClaimedRow, ClaimOptions, EventClaim, IndexDefinition, KnownLotsWritten, LotJsonRow, LotUpdate, MailClaim, QueuedUrl, LotVersionRow, StorageDialect, StoredLotJson } from '../dialect.ts';
import { lockAccountSqlite } from './account-lock.ts';
import { insertAttemptsSqlite } from './auth-attempts.ts';
import { SQLITE_PAGE_BYTES, startCheckpointer, WAL_RESTART_BYTES, type Checkpointer } from './checkpointer.ts';
import { isSqliteUniqueViolation, openSqlite } from './connection.ts';
import { runDirect, runKeptDirect } from './direct-statements.ts';
import { lotJsonOfRowSqlite, lotsJsonByVinSqlite, withImages } from './lot-json.ts';
import { appendVersionsSqlite, lotRowsByKeySqlite, sightLotsSqlite, storedLotsByKeySqlite, touchLotsSqlite, writeKnownLotsSqlite } from './lot-history.ts';
import { versionsInAppendOrderSqlite } from './report-snapshot.ts';
import { tuneSqliteForBulkLoad, updateLotsSqlite, upsertLotsSqlite } from './lots-upsert.ts';
import { buildIndexSqlite, indexExistsSqlite, secondaryLotsIndexesSqlite } from './lots-indexes.ts';
import { claimMailSqlite } from './mail-claim.ts';
import { archivedMediaByUrl, claimMediaImages, enqueueMediaUrls } from './media-queue.ts';
import { SqliteSearchCommit } from './search-commit.ts';
import { SqliteSearchCommitThread, type CommitThreadData } from './search-commit-thread.ts';
import { claimDueEventsSqlite } from './webhook-claims.ts';
import { WriteGate } from './write-gate.ts';
import type { BulkWriter, SearchCommitWaits } from '../dialect.ts';

export interface OpenSqliteStorageOptions {
  /** A file path, or ':memory:' for tests. */
  file: string;
  busyTimeoutMs?: number;
  /** Checkpoint the WAL from a worker thread (long-running server processes; a file only). */
  backgroundCheckpoint?: boolean;
  onBackgroundError?: (message: string) => void;
  /** Commit searches on a thread of its own with a connection of its own (the server; a file only). */
  searchCommitThread?: boolean;
}

/** SQLite's side of the storage dialect: one better-sqlite3 connection, in this process. */
export class SqliteStorageDialect implements StorageDialect {
  readonly name = 'sqlite' as const;
  private commit: SearchCommit | null = null;
  private thread: SqliteSearchCommitThread | null = null;

  constructor(
    private readonly kysely: Kysely<Database>,
    /** The driver under `kysely`: the same connection, for statements run on it directly. */
    readonly raw: BetterSqlite3.Database,
    private readonly commitThread: CommitThreadData | null,
    private readonly checkpointer: Checkpointer | null,
    /** The file's writers in this process take it (write-gate.ts); null for an in-memory database. */
    private readonly gate: WriteGate | null = null,
    private readonly file = ':memory:',
  ) {}

  /** A file: a bulk writer may open a connection of its own on a thread of its own, yielding to this process's writes at the gate. */
  bulkWriter(): BulkWriter | null {
    if (this.gate === null) return null;
    return {
      file: this.file,
      gate: this.gate.buffer,
      lockTimeoutMs: this.raw.pragma('busy_timeout', { simple: true }) as number,
      walAutocheckpoint: this.raw.pragma('wal_autocheckpoint', { simple: true }) as number,
    };
  }

  searchCommitWaits(): SearchCommitWaits | null {
    return this.gate?.waits() ?? null;
  }

  isUniqueViolation(error: unknown): boolean {
    return isSqliteUniqueViolation(error);
  }

  async migrationTableSchema(): Promise<string | undefined> {
    return undefined;
  }

  async close(): Promise<void> {
    await this.thread?.close();
    await this.kysely.destroy();
    await this.checkpointer?.stop();
  }

  /**
   * On the driver when no transaction is open on the connection; inside one, through Kysely
   * (null), which runs it after the transaction instead of letting it see uncommitted rows.
   */
  runPrepared(sql: string, parameters: unknown[]): Promise<unknown[]> | null {
    return this.onDriver(() => runDirect(this.raw, sql, parameters));
  }

  /** runPrepared's way for a statement its owner keeps (the catalogue's pages): inside a transaction, through Kysely too. */
  runKept(owner: object, sql: string, parameters: unknown[]): Promise<unknown[]> | null {
    return this.onDriver(() => runKeptDirect(this.raw, owner, sql, parameters));
  }

  /** A synchronous run on the driver as a promise, or null while a transaction is open on the connection. */
  private onDriver(run: () => unknown[]): Promise<unknown[]> | null {
    if (this.raw.inTransaction) return null;
    try {
      return Promise.resolve(run());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  readonly catalogueYear = catalogueYearSqlite;
  readonly comparablesJson = comparablesJsonSqlite;
  readonly lotJson = lotJsonOfRowSqlite;

  lotsJsonReader(kysely: Kysely<Database>): (vin: string) => Promise<LotJsonRow[]> {
    const jsonByVin = new PreparedQuery(kysely, ['vin'], (p: { vin: string }) => lotsJsonByVinSqlite(kysely, p.vin));
    const target = { kysely, dialect: this };
    return async (vin) => (await jsonByVin.run(target, { vin })).map(withImages);
  }

  upsertLots(kysely: Kysely<Database>, lots: readonly Lot[], at: string, source: string): Promise<LotUpsertStatus[]> {
    return upsertLotsSqlite(kysely, this.raw, lots, at, source);
  }

  updateLots(kysely: Kysely<Database>, updates: readonly LotUpdate[], at: string): Promise<void> {
    return updateLotsSqlite(kysely, this.raw, updates, at);
  }

  // Lot history (lot-history.ts).
  versionsInAppendOrder(kysely: Kysely<Database>, ref: LotRef): Promise<string[]> {
    return versionsInAppendOrderSqlite(kysely, ref);
  }

  lotRowsByKey(kysely: Kysely<Database>, keys: readonly LotRef[]): Promise<LotRow[]> {
    return lotRowsByKeySqlite(kysely, keys);
  }

  storedLotsByKey(kysely: Kysely<Database>, keys: readonly LotRef[]): Promise<StoredLotJson[]> {
    return storedLotsByKeySqlite(kysely, keys);
  }

  touchLots(kysely: Kysely<Database>, keys: readonly LotRef[], at: string): Promise<void> {
    return touchLotsSqlite(kysely, keys, at);
  }

  sightLots(kysely: Kysely<Database>, keys: readonly LotRef[], at: string): Promise<void> {
    return sightLotsSqlite(kysely, keys, at);
  }

  writeKnownLots(kysely: Kysely<Database>, lots: readonly Lot[], at: string, source: string, options: { groups: boolean }): Promise<KnownLotsWritten> {
    return writeKnownLotsSqlite(kysely, this.raw, lots, at, source, options);
  }

  appendVersions(kysely: Kysely<Database>, versions: readonly LotVersionRow[]): Promise<void> {
    return appendVersionsSqlite(kysely, this.raw, versions);
  }

  tuneForBulkLoad(kysely: Kysely<Database>): Promise<void> {
    return tuneSqliteForBulkLoad(kysely);
  }

  secondaryLotsIndexes(kysely: Kysely<Database>): Promise<IndexDefinition[]> {
    return secondaryLotsIndexesSqlite(kysely);
  }

  indexExists(kysely: Kysely<Database>, name: string): Promise<boolean> {
    return indexExistsSqlite(kysely, name);
  }

  buildIndex(kysely: Kysely<Database>, definition: string): Promise<void> {
    return buildIndexSqlite(kysely, definition);
  }

  /** In the server, on a thread of its own (stopped when the database closes); else on this connection. */
  searchCommit(): SearchCommit {
    if (this.commit === null) {
      if (this.commitThread === null) this.commit = new SqliteSearchCommit(this.kysely, this.raw, this.gate);
      else this.commit = this.thread = new SqliteSearchCommitThread(this.commitThread);
    }
    return this.commit;
  }

  claimMail(kysely: Kysely<Database>, claim: MailClaim): Promise<MailQueueRow[]> {
    return claimMailSqlite(kysely, claim);
  }

  claimWebhookEvents(kysely: Kysely<Database>, claim: EventClaim): Promise<WebhookOutboxRow[]> {
    return claimDueEventsSqlite(kysely, claim);
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

  insertAttempts(kysely: Kysely<Database>, insert: RawBuilder<unknown>, rows: number): Promise<boolean> {
    return insertAttemptsSqlite(kysely, insert, rows);
  }

  lockAccount(trx: Kysely<Database>, accountId: string): Promise<void> {
    return lockAccountSqlite(trx, accountId);
  }
  // Batches (issue 26).
  claimBatches(kysely: Kysely<Database>, claim: BatchClaim): Promise<BatchRow[]> {
    return claimBatchesSqlite(kysely, claim);
  }

  storeBatch(kysely: Kysely<Database>, insertBatch: (kysely: Kysely<Database>) => Promise<void>, batchId: string, inputsJson: string): Promise<void> {
    return storeBatchSqlite(kysely, insertBatch, batchId, inputsJson);
  }
}

/** Opens the connection with its settings (connection.ts), and what runs beside it in the server. */
export function openSqliteStorage(options: OpenSqliteStorageOptions): { kysely: Kysely<Database>; dialect: SqliteStorageDialect } {
  const onFile = options.file !== ':memory:';
  const background = options.backgroundCheckpoint === true && onFile;
  const gate = onFile ? new WriteGate() : null;
  const { dialect, raw } = openSqlite({
    file: options.file,
    ...(gate ? { gate } : {}),
    backgroundCheckpoint: background,
    ...(options.busyTimeoutMs !== undefined ? { busyTimeoutMs: options.busyTimeoutMs } : {}),
  });
  const kysely = new Kysely<Database>({ dialect });
  const commitThread =
    options.searchCommitThread === true && onFile
      ? { file: options.file, lockTimeoutMs: raw.pragma('busy_timeout', { simple: true }) as number, walRestartBytes: WAL_RESTART_BYTES, gate: gate!.buffer }
      : null;
  // Each WAL is restarted by its writer under load: the searches file's by the commit thread when
  // there is one; the main file's always by the checkpointer (the search commit does not need its lock).
  const checkpointer = background
    ? startCheckpointer(options.file, options.onBackgroundError ?? (() => {}), { searchesRestartFrames: commitThread ? null : WAL_RESTART_BYTES / SQLITE_PAGE_BYTES })
    : null;
  return { kysely, dialect: new SqliteStorageDialect(kysely, raw, commitThread, checkpointer, gate, options.file) };
}
