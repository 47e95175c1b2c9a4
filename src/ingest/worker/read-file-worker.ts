import { open, type FileHandle } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import type { Lot } from '../../domain/lot.ts';
import { createVinEnricher, type VinEnricher } from '../enrich-from-vin.ts';
import { MappingError, type CsvMapping } from '../formats/csv-mapping.ts';
import type { RejectedRecord } from '../import-lots.ts';
import { InputRefusedError, openLotSource, type FormatName, type LotSource } from '../sources/open-lot-source.ts';
import { prepareRecord } from '../prepare-lot.ts';

/**
 * The worker half of a file import (read-file-in-worker.ts starts it): reads the file, recognises
 * its format, parses, maps and normalises every record (and enriches it from the VIN when asked),
 * and sends lots ready to store, so that the main thread spends its time in SQLite, the slower
 * side for every format (docs/benchmarks.md).
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
}

export type WorkerMessage =
  | { type: 'opened'; description: string; size: number }
  | {
      type: 'chunk';
      read: number;
      lastLine: number;
      lots: Lot[];
      derived?: (Partial<Lot> | undefined)[];
      rejected: RejectedRecord[];
      bytesRead: number;
    }
  | { type: 'end'; bytesRead: number; enriched?: { decoded: number; enriched: number } }
  /** The file cannot be opened, or is not lot data: nothing was read from it. */
  | { type: 'refused'; message: string; cannotOpen: boolean }
  /** Reading failed part-way: the chunks sent before are good. */
  | { type: 'read-error'; message: string; bytesRead: number }
  | { type: 'unpacking' };

export type MainMessage = { type: 'ack' } | { type: 'stop' };

async function run(job: ReadFileJob): Promise<void> {
  const port = parentPort!;
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
    send({ type: 'refused', message: (error as Error).message, cannotOpen: true });
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
      const refused = error instanceof InputRefusedError || error instanceof MappingError;
      send({ type: 'refused', message: (error as Error).message, cannotOpen: !refused });
      return;
    }
    if (job.enrichDataDir) enricher = await createVinEnricher({ dataDir: job.enrichDataDir, onUnpack: () => send({ type: 'unpacking' }) });
    send({ type: 'opened', description: source.description, size });

    try {
      let chunk = { read: 0, lastLine: 0, lots: [] as Lot[], derived: undefined as (Partial<Lot> | undefined)[] | undefined, rejected: [] as RejectedRecord[] };
      const flush = async () => {
        if (chunk.read === 0) return;
        const { derived, ...rest } = chunk;
        await sendChunk({ type: 'chunk', ...rest, ...(derived ? { derived } : {}), bytesRead: stream.bytesRead });
        chunk = { read: 0, lastLine: 0, lots: [], derived: undefined, rejected: [] };
      };
      try {
        for await (const record of source.records) {
          if (stopped) break;
          chunk.read++;
          chunk.lastLine = record.line;
          const prepared = prepareRecord(record);
          if (!prepared.ok) {
            const { line, reason, source: text } = prepared;
            chunk.rejected.push(text === undefined ? { line, reason } : { line, reason, source: text });
          } else {
            const derived = enricher ? await enricher.derive(prepared.lot) : undefined;
            if (derived) (chunk.derived ??= new Array(chunk.lots.length))[chunk.lots.length] = derived;
            chunk.lots.push(prepared.lot);
          }
          if (chunk.read >= job.chunkSize) await flush();
        }
      } finally {
        // The records read before a failure go first, then the failure.
        await flush();
      }
    } catch (error) {
      send({ type: 'read-error', message: (error as Error).message, bytesRead: stream.bytesRead });
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
