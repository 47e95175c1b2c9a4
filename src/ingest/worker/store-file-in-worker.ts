import { MessageChannel, type Worker } from 'node:worker_threads';
import type { BulkWriter } from '../../storage/database.ts';
import { startModuleWorker } from '../../worker-threads.ts';
import type { CsvMapping } from '../formats/csv-mapping.ts';
import type { ImportSummary } from '../import-summary.ts';
import { IngestError } from '../ingest-error.ts';
import { PREPARE_CHUNK_SIZE } from '../prepare-lot.ts';
import type { FormatName } from '../sources/open-lot-source.ts';
import type { ReadFileJob } from './read-file-worker.ts';
import type { StoreControl, StoreJob, StoreMessage } from './store-chunks-worker.ts';
import { slicePolicy, type SlicePolicy } from './write-slices.ts';

export interface StoreFileJob {
  file: string;
  format: FormatName;
  mapping?: CsvMapping | undefined;
  batchSize: number;
  source: string;
  writer: BulkWriter;
  photoArchive: boolean;
  /** While the server's writers come, a batch is written in slices (write-slices.ts, slicePolicy); none: whole batches. */
  slices?: SlicePolicy;
}

export interface StoredInWorker {
  description: string;
  summary: ImportSummary;
  /** Reading stopped part-way ('cut-short', 'interrupted'): what was read before it is stored. */
  failure: IngestError | null;
  /** How long each transaction (a batch, or a slice of one) held the write lock, in order. */
  heldMs: number[];
}

/**
 * A feed's file read on one worker thread (read-file-worker.ts) and stored on another with a
 * connection of its own (store-chunks-worker.ts), the lots passing between the two directly: the
 * event loop only hears what each batch did. A file that is not lot data throws its IngestError
 * before anything is stored, as the in-process import does.
 */
export async function storeFileInWorker(
  job: StoreFileJob,
  options: { onStored?: (keys: [string, number][]) => void; signal?: AbortSignal } = {},
): Promise<StoredInWorker> {
  const channel = new MessageChannel();
  const reader = startModuleWorker(import.meta.url, 'read-file-worker', {
    workerData: {
      file: job.file,
      format: job.format,
      ...(job.mapping ? { mapping: job.mapping } : {}),
      chunkSize: PREPARE_CHUNK_SIZE,
      // Two batches ahead, so that the writer never waits for the parser.
      maxInFlight: Math.max(8, Math.ceil((2 * job.batchSize) / PREPARE_CHUNK_SIZE)),
      port: channel.port1,
    } satisfies ReadFileJob,
    transferList: [channel.port1],
  });
  // Both threads take the pull's priority (SCHED_IDLE by default). The storing thread holds the
  // main file's write lock, but a search's commit no longer waits for it (the searches' writes are
  // in a file of their own: storage/dialects/sqlite/searches-file.ts), so it may be preempted with
  // the lock in hand at no cost to the searches; before that split it kept niceness 19 for this
  // reason (docs/decisions.md, issue 25).
  const writer = startModuleWorker(import.meta.url, 'store-chunks-worker', {
    workerData: { writer: job.writer, photoArchive: job.photoArchive, batchSize: job.batchSize, slices: job.slices ?? slicePolicy(0), source: job.source, keys: options.onStored !== undefined, port: channel.port2 } satisfies StoreJob,
    transferList: [channel.port2],
  });
  const stop = () => writer.postMessage({ type: 'stop' } satisfies StoreControl);
  options.signal?.addEventListener('abort', stop, { once: true });
  try {
    return await new Promise<StoredInWorker>((resolve, reject) => {
      let description: string | null = null;
      const heldMs: number[] = [];
      writer.on('message', (message: StoreMessage) => {
        switch (message.type) {
          case 'opened':
            description = message.description;
            // Stopped before the file was open: stop now that the writer listens for it.
            if (options.signal?.aborted) stop();
            break;
          case 'not-read':
            reject(new IngestError(message.kind, message.message));
            break;
          case 'stored':
            heldMs.push(message.heldMs);
            if (message.keys) options.onStored?.(message.keys);
            break;
          case 'done': {
            const failure = message.failure ? new IngestError(message.failure.kind, message.failure.message, message.summary, message.failure.afterLine) : null;
            resolve({ description: description ?? 'unknown', summary: message.summary, failure, heldMs });
            break;
          }
          case 'fault':
            reject(Object.assign(new Error(message.message), message.code === undefined ? {} : { code: message.code }));
            break;
        }
      });
      const failed = (which: string) => (error: Error) => reject(new Error(`the feed's ${which} thread failed: ${error.message}`, { cause: error }));
      writer.on('error', failed('storing'));
      reader.on('error', failed('reading'));
      writer.on('exit', (code) => reject(new Error(`the feed's storing thread stopped (exit code ${code})`)));
    });
  } finally {
    options.signal?.removeEventListener('abort', stop);
    await Promise.all([terminate(writer), terminate(reader)]);
  }
}

function terminate(worker: Worker): Promise<unknown> {
  return worker.terminate().catch(() => undefined);
}
