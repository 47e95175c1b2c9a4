import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { sql } from 'kysely';
import { lotsWrittenHooks } from '../../lots-written-hooks.ts';
import { openDatabase, WriteGate, type BulkWriter } from '../../storage/database.ts';
import { LotsRepository, type UpsertSummary } from '../../storage/repositories/lots-repository.ts';
import { importPreparedChunks, type LotSink } from '../import-lots.ts';
import { emptySummary, type ImportSummary } from '../import-summary.ts';
import { IngestError, messageOf, type IngestErrorKind } from '../ingest-error.ts';
import type { PreparedChunk } from '../prepare-lot.ts';
import type { MainMessage, WorkerMessage as ReaderMessage } from './read-file-worker.ts';
import { WriteSlices, type SlicePolicy } from './write-slices.ts';
import { giveWayOf } from '../../worker-threads.ts';

/**
 * The storing half of a feed's pull in the server (store-file-in-worker.ts starts it): takes the
 * lots the reading thread prepares (read-file-worker.ts, over `port`) and stores them in batches on
 * a connection of its own, so that neither the parsing nor the batches' transactions run on the
 * event loop that answers searches. Before each transaction it yields at the process's write gate
 * to any search waiting to commit (storage/dialects/sqlite/write-gate.ts), and while searches
 * come it writes a batch in slices short enough for a search's commit to wait little
 * (write-slices.ts).
 */
export interface StoreJob {
  writer: BulkWriter;
  /** The photo archive is on: its queue takes part in each batch, as in the server's own batches. */
  photoArchive: boolean;
  batchSize: number;
  /** While the server's writers come, a batch is written in slices (write-slices.ts). */
  slices: SlicePolicy;
  source: string;
  /** Send back the keys of each batch's lots (a listing feed keeps them). */
  keys: boolean;
  /** The reading thread's messages. */
  port: MessagePort;
}

export type StoreMessage =
  | { type: 'opened'; description: string }
  | { type: 'not-read'; kind: IngestErrorKind; message: string }
  /** A transaction committed (a batch, or a slice of one): what it did, its lots' keys when asked, and how long it held the write lock. */
  | { type: 'stored'; inserted: number; updated: number; unchanged: number; keys?: [string, number][]; heldMs: number }
  | { type: 'done'; summary: ImportSummary; failure: { kind: IngestErrorKind; message: string; afterLine: number } | null }
  /** A fault (the database's): the batches before it stay stored. */
  | { type: 'fault'; message: string; code?: string };

export type StoreControl = { type: 'stop' };

async function run(job: StoreJob): Promise<void> {
  const parent = parentPort!;
  const send = (message: StoreMessage) => parent.postMessage(message);
  const stopping = new AbortController();
  parent.on('message', (message: StoreControl) => {
    if (message.type === 'stop') stopping.abort();
  });

  const queue: ReaderMessage[] = [];
  let wake: (() => void) | null = null;
  job.port.on('message', (message: ReaderMessage) => {
    queue.push(message);
    wake?.();
    wake = null;
  });
  const next = async (): Promise<ReaderMessage> => {
    for (;;) {
      const message = queue.shift();
      if (message) return message;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  const tell = (message: MainMessage) => job.port.postMessage(message);

  const first = await next();
  if (first.type === 'not-read') return send({ type: 'not-read', kind: first.kind, message: first.message });
  if (first.type !== 'opened') return send({ type: 'fault', message: `the file reader answered ${first.type} before opening the file` });

  const db = await openDatabase({ kind: 'sqlite', file: job.writer.file }, { lockTimeoutMs: job.writer.lockTimeoutMs });
  try {
    // As the server's connection: no checkpoint inside this thread's commits when a checkpointer copies the log back.
    await sql.raw(`pragma wal_autocheckpoint = ${Math.trunc(job.writer.walAutocheckpoint)}`).execute(db.kysely);
    const lots = new LotsRepository(db, { lotsWritten: lotsWrittenHooks({ photoArchive: job.photoArchive }) });
    const gate = new WriteGate(job.writer.gate);
    send({ type: 'opened', description: first.description });

    // A feed's pull gives way to the server's counted requests before each transaction
    // (worker-threads.ts), and while they come writes in slices, as while the server's own writers come.
    const giveWay = giveWayOf(job);
    const slices = new WriteSlices(job.slices, giveWay ? () => gate.priorityEntries + giveWay.begun : () => gate.priorityEntries);
    const sink: LotSink = {
      upsertBatch: async (batch, given) => {
        // One moment for the batch's slices, as for its one transaction.
        const options = given instanceof Date ? { now: given } : { ...given, now: given?.now ?? new Date() };
        const total: UpsertSummary = { inserted: 0, updated: 0, unchanged: 0 };
        for (let start = 0; start < batch.length; ) {
          const count = slices.next(batch.length - start);
          const slice = count === batch.length ? batch : batch.slice(start, start + count);
          start += count;
          giveWay?.pause();
          gate.enterYielding(job.slices.maxYieldMs);
          const began = performance.now();
          let stored;
          try {
            stored = await lots.upsertBatch(slice, options);
          } finally {
            gate.leave();
          }
          const heldMs = performance.now() - began;
          slices.held(slice.length, heldMs);
          total.inserted += stored.inserted;
          total.updated += stored.updated;
          total.unchanged += stored.unchanged;
          if (stored.events !== undefined) total.events = (total.events ?? 0) + stored.events;
          send({
            type: 'stored',
            inserted: stored.inserted,
            updated: stored.updated,
            unchanged: stored.unchanged,
            heldMs,
            ...(job.keys ? { keys: slice.map((lot): [string, number] => [lot.auction, lot.lot_id]) } : {}),
          });
        }
        return total;
      },
    };

    async function* chunks(): AsyncGenerator<PreparedChunk> {
      try {
        for (;;) {
          const message = await next();
          if (message.type === 'chunk') {
            tell({ type: 'ack' });
            const { type: _type, bytesRead: _bytes, ...chunk } = message;
            yield chunk;
          } else if (message.type === 'end') return;
          else if (message.type === 'read-error') throw new Error(message.message);
          else throw new Error(`the file reader sent ${message.type} in the middle of the file`);
        }
      } finally {
        tell({ type: 'stop' });
      }
    }

    const summary = emptySummary();
    try {
      await importPreparedChunks(chunks(), { lots: sink, batchSize: job.batchSize, summary, source: job.source, signal: stopping.signal });
      send({ type: 'done', summary, failure: null });
    } catch (error) {
      if (error instanceof IngestError) send({ type: 'done', summary: error.summary, failure: { kind: error.kind, message: error.message, afterLine: error.afterLine } });
      else {
        const code = (error as { code?: unknown } | null)?.code;
        send({ type: 'fault', message: messageOf(error), ...(typeof code === 'string' ? { code } : {}) });
      }
    }
  } finally {
    await db.close();
    job.port.close();
  }
}

await run(workerData as StoreJob);
