/**
 * The lean server's store thread (lean-search-server.ts --thread): a connection of its own, where
 * each search's lots are read and its commit runs, so that the event loop keeps only HTTP. The
 * searches that arrive during one turn of this thread's loop go in one transaction; one reply
 * answers them all.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../src/storage/database.ts';
import type { SqliteStorageDialect } from '../../src/storage/dialects/sqlite/index.ts';
import { leanStore, type CommitLevel, type LeanSearch } from './lean-store.ts';

export interface StoreRequest {
  ids: number[];
  searches: LeanSearch[];
}

const { file, level } = workerData as { file: string; level: CommitLevel };
const db = await openDatabase({ kind: 'sqlite', file });
// The main thread's checkpointer copies the log into the database; none inside these commits.
(db.dialect as SqliteStorageDialect).raw.pragma('wal_autocheckpoint = 0');
const store = leanStore(db, level);

let ids: number[] = [];
let searches: LeanSearch[] = [];
parentPort!.on('message', (request: StoreRequest) => {
  if (ids.length === 0) setImmediate(flush);
  ids.push(...request.ids);
  searches.push(...request.searches);
});

function flush(): void {
  const batch = { ids, searches };
  ids = [];
  searches = [];
  try {
    parentPort!.postMessage({ ids: batch.ids, outcomes: store.commitAll(batch.searches) });
  } catch (error) {
    parentPort!.postMessage({ ids: batch.ids, error: String(error) });
  }
}
parentPort!.postMessage({ ready: true });
