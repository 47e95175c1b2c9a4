import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { searchesFileOf } from './searches-file.ts';

/**
 * SQLite merges its write-ahead log into the database inside whichever COMMIT crosses the
 * auto-checkpoint threshold, which stalls the event loop for milliseconds every few hundred
 * searches. The server turns auto-checkpoints off on its connection and runs them here instead:
 * a worker thread with a connection of its own checkpoints PASSIVE-ly (never blocking writers)
 * every CHECKPOINT_INTERVAL_MS, and truncates the log when the server shuts down.
 *
 * Under steady writes a PASSIVE checkpoint never catches up with the last frame (commits land
 * while it syncs), and the log only starts over from its beginning once one has: the WAL grew
 * without bound (1 GB in a minute of benchmark), every append extending the file. So once the log
 * holds more than `restartFrames`, the worker follows its PASSIVE checkpoint with a RESTART one,
 * which holds the write lock while it copies the few frames written meanwhile, so that the next
 * writer starts the log over. The server's search commit does not wait for that lock on the event
 * loop (search-commit.ts). The file is not cut back: the log is written again from its beginning,
 * into blocks the file already has (truncating and growing it again cost the writer up to hundreds
 * of milliseconds on the event loop).
 * With the search commit on a thread of its own, that thread restarts the searches file's log
 * itself, between two batches (search-commit-worker.ts).
 *
 * Both files are checkpointed, each on its own (searches-file.ts): the main file's log, which the
 * lots' imports and pulls and the server's other writes grow, is always restarted here past the
 * bound (a RESTART holds that file's lock, which a search's commit no longer needs); the searches
 * file's unless the commit thread restarts it.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
const files = [['main', workerData.restartFrames]];
if (workerData.searchesFile !== null) {
  db.prepare('attach database ? as searches').run(workerData.searchesFile);
  files.push(['searches', workerData.searchesRestartFrames]);
}
const timer = setInterval(() => {
  for (const [schema, restartFrames] of files) {
    try {
      const [passive] = db.pragma(schema + '.wal_checkpoint(PASSIVE)');
      if (passive && restartFrames !== null && passive.log >= restartFrames) db.pragma(schema + '.wal_checkpoint(RESTART)');
    } catch (error) { parentPort.postMessage({ error: String(error) }); }
  }
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  for (const [schema] of files) {
    try { db.pragma(schema + '.wal_checkpoint(TRUNCATE)'); } catch {}
  }
  db.close();
  parentPort.postMessage('stopped');
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

/**
 * The WAL's size past which it is restarted: 512 MiB. A restart holds the write lock while it
 * copies the last frames and syncs the database (tens of milliseconds, during which searches wait
 * to commit); at 64 MiB that came every 2 s at 1,000 searches a second and set the p99
 * (docs/decisions.md, "The WAL is bounded").
 */
export const WAL_RESTART_BYTES = 512 * 1024 * 1024;
export const SQLITE_PAGE_BYTES = 4096;

/**
 * How often the worker checkpoints: every 100 ms. A checkpoint ends with an fsync of the database
 * file, and the server's own writes wait on the disk meanwhile; ten times a second each fsync
 * carries a tenth of the pages. On 100k lots the p99 at 1,000 searches/s was 4.2-9.5 ms in nine
 * runs of ten at 100 ms against 5.9-11.1 (and one 50 ms) at one second; on a 1M database in the
 * page cache the two were alike (docs/decisions.md, "Checkpoints every 100 ms"). A checkpoint with
 * nothing new to copy does nothing.
 */
export const CHECKPOINT_INTERVAL_MS = 100;

/**
 * `restartFrames`: the main file's log length (frames) past which the checkpointer restarts it;
 * `searchesRestartFrames` the searches file's, null when another writer restarts it (the search
 * commit thread, search-commit-worker.ts). `searchesFile`: the file beside `file` unless given;
 * null for none (a database of one file).
 */
export function startCheckpointer(
  file: string,
  onError: (message: string) => void,
  {
    intervalMs = CHECKPOINT_INTERVAL_MS,
    restartFrames = WAL_RESTART_BYTES / SQLITE_PAGE_BYTES,
    searchesRestartFrames = WAL_RESTART_BYTES / SQLITE_PAGE_BYTES,
    searchesFile = searchesFileOf(file),
  }: { intervalMs?: number; restartFrames?: number | null; searchesRestartFrames?: number | null; searchesFile?: string | null } = {},
): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, driver, intervalMs, restartFrames, searchesRestartFrames, searchesFile } });
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
