import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../../worker-threads.ts';
import type { CommitResult, SearchCommit, SearchToCommit } from '../../search-commit.ts';
import { MAX_GROUP_COMMIT, type Outcome, type PendingSearch as Pending } from './search-batch.ts';

export interface CommitThreadData {
  file: string;
  lockTimeoutMs: number;
  /** The WAL's size past which the thread restarts it between two batches. */
  walRestartBytes: number;
  /** The process's write gate (write-gate.ts): the thread's batches enter it with priority. */
  gate?: SharedArrayBuffer;
}

export interface CommitThreadRequest {
  id: number;
  inputs: SearchToCommit[];
}

/** An error as it crosses the thread boundary: what the error handler and isDatabaseBusy read of it. */
interface WireError {
  name: string;
  message: string;
  code?: string;
}

/** A committed search's lots are the request's own: they do not travel back. */
type WireOutcome = { ok: true; result: CommitResult } | { ok: false; error: WireError };

export type CommitThreadReply = { id: number; outcomes: WireOutcome[] } | { id: number; error: WireOutcome };

export function toWire(outcome: Outcome): WireOutcome {
  if (outcome.ok) {
    const { result } = outcome;
    return { ok: true, result: result.kind === 'committed' ? { ...result, search: { ...result.search, lots: [] } } : result };
  }
  const error = outcome.error as { name?: unknown; message?: unknown; code?: unknown } | null;
  return {
    ok: false,
    error: {
      name: typeof error?.name === 'string' ? error.name : 'Error',
      message: typeof error?.message === 'string' ? error.message : String(outcome.error),
      ...(typeof error?.code === 'string' ? { code: error.code } : {}),
    },
  };
}

function fromWire(error: WireError): Error {
  return Object.assign(new Error(error.message), { name: error.name }, error.code === undefined ? {} : { code: error.code });
}

/**
 * SQLite, in the server: the search commit on a thread of its own (search-commit-worker.ts), with a
 * connection of its own to the database file. The units, the savepoints and the group commit are
 * those of the in-process commit (search-batch.ts); what moves off the event loop is the commit's
 * work (a third of a search's CPU) and its waits: for the write lock while a CLI import or the
 * checkpointer holds it, and for the disk when a write stalls, which on the event loop held every
 * request (docs/benchmarks.md, "The commit thread"). Searches that ask to commit while a batch is in the thread
 * go together in the next one; each is answered only after its batch's COMMIT.
 */
export class SqliteSearchCommitThread implements SearchCommit {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private pending: Pending[] = [];
  private inFlight: { id: number; batch: Pending[] } | null = null;
  private scheduled = false;
  private nextId = 1;
  private closed = false;
  private idle: (() => void) | null = null;

  constructor(private readonly data: CommitThreadData) {}

  commit(input: SearchToCommit): Promise<CommitResult> {
    if (this.closed) return Promise.reject(new Error('the search commit thread is closed'));
    return new Promise<CommitResult>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      this.schedule();
    });
  }

  /** Waits for the batch in the thread, then stops it. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.inFlight !== null || this.pending.length > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight !== null) return;
    this.scheduled = true;
    // Every search that asks during this turn of the event loop goes in the same batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.send();
    });
  }

  private async send(): Promise<void> {
    if (this.inFlight !== null || this.pending.length === 0) return;
    const batch = this.pending.splice(0, MAX_GROUP_COMMIT);
    const id = this.nextId++;
    this.inFlight = { id, batch };
    try {
      const worker = await this.start();
      worker.ref();
      worker.postMessage({ id, inputs: batch.map((item) => item.input) } satisfies CommitThreadRequest);
    } catch (error) {
      this.settle(id, { id, error: toWire({ ok: false, error }) });
    }
  }

  private start(): Promise<Worker> {
    if (this.worker !== null && this.ready !== null) return this.ready.then(() => this.worker!);
    const worker = startModuleWorker(import.meta.url, 'search-commit-worker', { workerData: this.data });
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: CommitThreadReply | { ready: true }) => {
        if ('ready' in message) resolve();
        else this.settle(message.id, message);
      });
      const fail = (error: Error) => {
        reject(error);
        if (this.worker === worker) {
          this.worker = null;
          this.ready = null;
        }
        // The batch in the thread is lost with it: its searches fail (nothing of theirs is answered as committed).
        if (this.inFlight !== null) this.settle(this.inFlight.id, { id: this.inFlight.id, error: toWire({ ok: false, error }) });
      };
      worker.on('error', fail);
      worker.on('exit', (code) => {
        if (!this.closed || this.inFlight !== null) fail(new Error(`the search commit thread stopped (exit code ${code})`));
      });
    });
    return this.ready.then(() => worker);
  }

  private settle(id: number, reply: CommitThreadReply): void {
    const flight = this.inFlight;
    if (flight === null || flight.id !== id) return;
    this.inFlight = null;
    this.worker?.unref();
    if ('outcomes' in reply) {
      flight.batch.forEach((item, i) => {
        const outcome = reply.outcomes[i]!;
        if (!outcome.ok) item.reject(fromWire(outcome.error));
        else if (outcome.result.kind === 'committed') item.resolve({ ...outcome.result, search: { ...outcome.result.search, lots: item.input.lots } });
        else item.resolve(outcome.result);
      });
    } else {
      const error = fromWire((reply.error as { error: WireError }).error);
      for (const item of flight.batch) item.reject(error);
    }
    if (this.pending.length > 0) void this.send();
    else if (this.idle) this.idle();
  }
}
