import { startModuleWorker } from '../../worker-threads.ts';
import { IngestError } from '../ingest-error.ts';
import { PREPARE_CHUNK_SIZE, type PreparedChunk } from '../prepare-lot.ts';
import type { MainMessage, ReadFileJob, WorkerMessage } from './read-file-worker.ts';

/**
 * Reads, parses and normalises a lot file on a worker thread (read-file-worker.ts), so that the
 * main thread spends its time storing lots: on a machine with two cores or more, parsing and
 * storing then run side by side instead of taking turns. Same lots, same reports, same order as
 * reading the file in-process (the same prepare loop runs on the worker); importPreparedChunks
 * stores them. A file that cannot be read or is not lot data fails with the IngestError it would
 * have failed with in-process.
 */
export interface WorkerFileSource {
  description: string;
  /** The file's size in bytes, and how much of it the worker has read so far. */
  size: number;
  // Closures, not methods: the import hands them on unbound (import-files.ts).
  bytesRead: () => number;
  /** Set when the file was imported with --enrich, once the file is read. */
  enriched: () => { decoded: number; enriched: number } | undefined;
  /** Stops the worker if it still runs (the file was not read to the end). */
  close: () => Promise<void>;
  chunks: AsyncIterable<PreparedChunk>;
}

export async function readFileInWorker(
  job: Pick<ReadFileJob, 'file' | 'format' | 'mapping' | 'enrichDataDir'> & Partial<Pick<ReadFileJob, 'chunkSize' | 'maxInFlight'>>,
  options: { onUnpacking?: () => void } = {},
): Promise<WorkerFileSource> {
  const worker = startModuleWorker(import.meta.url, 'read-file-worker', {
    workerData: { chunkSize: PREPARE_CHUNK_SIZE, maxInFlight: 8, ...job } satisfies ReadFileJob,
  });
  const queue: WorkerMessage[] = [];
  let failure: Error | null = null;
  let exited = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  worker.on('message', (message: WorkerMessage) => {
    if (message.type === 'unpacking') options.onUnpacking?.();
    else queue.push(message);
    notify();
  });
  worker.on('error', (error) => {
    failure ??= error;
    notify();
  });
  worker.on('exit', () => {
    exited = true;
    notify();
  });
  const post = (message: MainMessage) => worker.postMessage(message);

  const next = async (): Promise<WorkerMessage> => {
    for (;;) {
      const message = queue.shift();
      if (message) return message;
      if (failure) throw failure;
      if (exited) throw new Error('the file reader stopped unexpectedly');
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  const stop = async () => {
    if (exited) return;
    post({ type: 'stop' });
    await worker.terminate();
  };

  let bytesRead = 0;
  let enriched: { decoded: number; enriched: number } | undefined;
  const first = await next().catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });
  if (first.type === 'not-read') {
    await worker.terminate();
    throw new IngestError(first.kind, first.message);
  }
  if (first.type !== 'opened') {
    await worker.terminate();
    throw new Error(`the file reader answered ${first.type} before opening the file`);
  }

  /** The worker's messages up to the end of the file, each acknowledged as it is taken. */
  async function* messages(): AsyncGenerator<Extract<WorkerMessage, { type: 'chunk' }>> {
    try {
      for (;;) {
        const message = await next();
        if (message.type === 'chunk') {
          bytesRead = message.bytesRead;
          post({ type: 'ack' });
          yield message;
        } else if (message.type === 'end') {
          bytesRead = message.bytesRead;
          enriched = message.enriched;
          return;
        } else if (message.type === 'read-error') {
          bytesRead = message.bytesRead;
          throw new Error(message.message);
        } else throw new Error(`the file reader sent ${message.type} in the middle of the file`);
      }
    } finally {
      // Done, failed, or stopped early (Ctrl-C, a database error): the worker has nothing left to do.
      await stop();
    }
  }

  async function* chunks(): AsyncGenerator<PreparedChunk> {
    for await (const message of messages()) {
      const { type: _type, bytesRead: _bytes, ...chunk } = message;
      yield chunk;
    }
  }

  return {
    description: first.description,
    size: first.size,
    bytesRead: () => bytesRead,
    enriched: () => enriched,
    close: stop,
    chunks: chunks(),
  };
}
