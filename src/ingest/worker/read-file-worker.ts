import { open, type FileHandle } from 'node:fs/promises';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { createVinEnricher, type VinEnricher } from '../enrich-from-vin.ts';
import type { CsvMapping } from '../formats/csv-mapping.ts';
import { IngestError, messageOf, type IngestErrorKind } from '../ingest-error.ts';
import { prepareChunks, type PreparedChunk } from '../prepare-lot.ts';
import { openLotSource, type FormatName, type LotSource } from '../sources/open-lot-source.ts';
import { giveWayOf } from '../../worker-threads.ts';

/**
 * The worker half of a file import (read-file-in-worker.ts starts it): reads the file, recognises
 * its format, prepares every record (prepare-lot.ts: parsed, mapped, normalised, and enriched from
 * the VIN when asked), and sends lots ready to store, so that the main thread spends its time in
 * SQLite, the slower side for every format (docs/benchmarks.md).
 */
export interface ReadFileJob {
  file: string;
  format: FormatName;
  mapping?: CsvMapping;
  /** DATA_DIR, when lots are to be enriched from the VIN. */
  enrichDataDir?: string;
  chunkSize: number;
  /** Chunks sent but not yet taken: the worker waits beyond this, so memory stays bounded. */
  maxInFlight: number;
  /**
   * Where the messages go, and acknowledgements come from: the thread that stores the lots (a
   * feed's pull in the server: store-chunks-worker.ts); the parent thread unless given.
   */
  port?: MessagePort;
}

export type WorkerMessage =
  | { type: 'opened'; description: string; size: number }
  | ({ type: 'chunk'; bytesRead: number } & PreparedChunk)
  | { type: 'end'; bytesRead: number; enriched?: { decoded: number; enriched: number } }
  /** The file cannot be opened, or is not lot data: nothing was read from it. */
  | { type: 'not-read'; kind: IngestErrorKind; message: string }
  /** Reading failed part-way: the chunks sent before are good. */
  | { type: 'read-error'; message: string; bytesRead: number }
  | { type: 'unpacking' };

export type MainMessage = { type: 'ack' } | { type: 'stop' };

async function run(job: ReadFileJob): Promise<void> {
  const port = job.port ?? parentPort!;
  // A feed's pull: the next chunk waits while the server answers a counted request (worker-threads.ts).
  const giveWay = giveWayOf(job);
  let inFlight = 0;
  let stopped = false;
  let wake: (() => void) | null = null;
  port.on('message', (message: MainMessage) => {
    if (message.type === 'ack') inFlight--;
    else stopped = true;
    wake?.();
    wake = null;
  });
  const send = (message: WorkerMessage) => port.postMessage(message);
  /** Sends a chunk once the main thread has taken enough of the earlier ones. */
  const sendChunk = async (message: WorkerMessage) => {
    while (inFlight >= job.maxInFlight && !stopped) await new Promise<void>((resolve) => (wake = resolve));
    inFlight++;
    send(message);
  };

  let handle: FileHandle;
  try {
    handle = await open(job.file, 'r');
  } catch (error) {
    send({ type: 'not-read', kind: 'unreadable', message: messageOf(error) });
    return;
  }
  const { size } = await handle.stat();
  const stream = handle.createReadStream({ highWaterMark: 256 * 1024 });
  let enricher: VinEnricher | undefined;
  try {
    let source: LotSource;
    try {
      source = await openLotSource(stream, { format: job.format, ...(job.mapping ? { mapping: job.mapping } : {}) });
    } catch (error) {
      send({ type: 'not-read', kind: error instanceof IngestError ? error.kind : 'unreadable', message: messageOf(error) });
      return;
    }
    if (job.enrichDataDir) enricher = await createVinEnricher({ dataDir: job.enrichDataDir, onUnpack: () => send({ type: 'unpacking' }) });
    send({ type: 'opened', description: source.description, size });

    try {
      for await (const chunk of prepareChunks(source.records, { chunkSize: job.chunkSize, enricher })) {
        await sendChunk({ type: 'chunk', ...chunk, bytesRead: stream.bytesRead });
        if (stopped) break;
        giveWay?.pause();
      }
    } catch (error) {
      send({ type: 'read-error', message: messageOf(error), bytesRead: stream.bytesRead });
      return;
    }
    send({ type: 'end', bytesRead: stream.bytesRead, ...(enricher ? { enriched: enricher.stats } : {}) });
  } finally {
    await enricher?.close();
    stream.destroy();
    await handle.close().catch(() => {});
  }
}

await run(workerData as ReadFileJob);
