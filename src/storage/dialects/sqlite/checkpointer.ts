import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * SQLite merges its write-ahead log into the database inside whichever COMMIT crosses the
 * auto-checkpoint threshold, which stalls the event loop for milliseconds every few hundred
 * searches. The server turns auto-checkpoints off on its connection and runs them here instead:
 * a worker thread with a connection of its own checkpoints PASSIVE-ly (never blocking writers)
 * once a second, and truncates the log when the server shuts down.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (error) { parentPort.postMessage({ error: String(error) }); }
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  try { db.pragma('wal_checkpoint(TRUNCATE)'); } catch {}
  db.close();
  parentPort.postMessage('stopped');
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(file: string, onError: (message: string) => void, intervalMs = 1000): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, driver, intervalMs } });
  worker.unref();
  const stopped = new Promise<void>((resolve) => {
    worker.on('message', (message: unknown) => {
      if (message === 'stopped') resolve();
      else if (typeof message === 'object' && message !== null && 'error' in message) onError(String(message.error));
    });
    worker.once('exit', () => resolve());
    worker.once('error', (error) => {
      onError(String(error));
      resolve();
    });
  });
  return {
    stop: async () => {
      worker.postMessage('stop');
      await stopped;
      await worker.terminate();
    },
  };
}
