/**
 * The search commit's thread (search-commit-thread.ts): a connection of its own to the database
 * file, where the searches' units of work run in one transaction per batch and may wait for the
 * write lock without stalling the event loop that serves requests.
 */
import { statSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { Kysely } from 'kysely';
import type { Database } from '../../schema.ts';
import { SearchUnit } from '../../search-commit.ts';
import { openSqlite } from './connection.ts';
import { SEARCHES_SCHEMA, searchesFileOf } from './searches-file.ts';
import { SqliteSearchBatch } from './search-batch.ts';
import { WriteGate } from './write-gate.ts';
import { toWire, type CommitThreadData, type CommitThreadReply, type CommitThreadRequest } from './search-commit-thread.ts';

const { file, lockTimeoutMs, walRestartBytes, gate: gateBuffer } = workerData as CommitThreadData;
// The batches write the searches file alone and do not enter the gate (a pull holds the main
// file's lock, never the searches file's); the gate counts their waits for their own lock.
const gate = gateBuffer ? new WriteGate(gateBuffer) : null;
const { dialect, raw } = openSqlite({ file, busyTimeoutMs: lockTimeoutMs });
// Kysely compiles the unit's statements; they run on the driver itself.
const kysely = new Kysely<Database>({ dialect });
// The server's checkpointer copies the log into the database; none inside this thread's commits.
raw.pragma('wal_autocheckpoint = 0');
// After a restart the log is written again from its beginning, and the file is cut back to the
// bound (a few frames past it at most, so cutting is cheap): the file's size then says whether the
// log has grown past the bound again. Without this the file stays at its largest and every batch
// would restart the log.
raw.pragma(`${SEARCHES_SCHEMA}.journal_size_limit = ${walRestartBytes}`);
// This thread writes the searches file alone: its log is the one it restarts (the checkpointer
// restarts the main file's, which the pull and the server's other writes grow).
const walFile = `${searchesFileOf(file)}-wal`;

/**
 * Under steady writes the checkpointer's PASSIVE checkpoints never reach the log's last frame, and
 * the log only starts over once one has (checkpointer.ts). This thread, the one writer under load,
 * restarts it between two batches once it is past its bound: a RESTART checkpoint copies what the
 * checkpointer has not yet, and the next commit writes from the log's beginning again.
 */
function restartLongLog(): void {
  let size: number;
  try {
    size = statSync(walFile).size;
  } catch {
    return;
  }
  if (size > walRestartBytes) raw.pragma(`${SEARCHES_SCHEMA}.wal_checkpoint(RESTART)`);
}
const batch = new SqliteSearchBatch(raw, new SearchUnit(kysely), { waitForLock: true });

parentPort!.on('message', (request: CommitThreadRequest) => {
  let reply: CommitThreadReply;
  try {
    reply = { id: request.id, outcomes: batch.run(request.inputs).map(toWire) };
    gate?.countSearchCommitWait(batch.lastLockMs);
  } catch (error) {
    reply = { id: request.id, error: toWire({ ok: false, error }) };
  }
  parentPort!.postMessage(reply);
  try {
    restartLongLog();
  } catch {
    // A restart refused (the lock held elsewhere past the timeout) is tried after the next batch.
  }
});
parentPort!.postMessage({ ready: true });
