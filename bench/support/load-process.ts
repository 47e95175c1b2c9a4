import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { summariseLatencies, type LatencySummary } from './latencies.ts';

/**
 * Searches at a fixed rate from a child process (load-process-child.ts): the load generator then
 * shares no event loop with the benchmark's own work. A run either lasts a given time or goes on
 * until stop(); its answer keeps each request's due time, to cut the run into slices.
 */
export interface LoadSetup {
  host: string;
  port: number;
  /** Each request's path is this prefix and one of the values, at random (URI-encoded). */
  pathPrefix: string;
  values: string[];
  headers: Record<string, string>;
  maxConnections: number;
}

export type LoadCommand = { type: 'setup'; setup: LoadSetup } | { type: 'start'; rate: number; seconds: number | null } | { type: 'stop' };

export type LoadReply =
  | { type: 'ready' }
  | {
      type: 'result';
      /** Milliseconds from the run's start to each answered request's due time, in answer order. */
      due: number[];
      /** Milliseconds from each answered request's due time to its answer's end. */
      latency: number[];
      statusCodes: Record<string, number>;
      errors: number;
      errorMessages: string[];
      seconds: number;
      /** When the run started, in ms since the epoch (performance.timeOrigin-based: comparable across processes to a millisecond or so). */
      startedAtEpochMs: number;
    };

export type LoadResult = Extract<LoadReply, { type: 'result' }>;

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export class LoadProcess {
  private pending: ((result: LoadResult) => void) | null = null;
  private output = '';

  private constructor(private readonly child: ChildProcess) {
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString('utf8')).slice(-8_192);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.on('message', (reply: LoadReply) => {
      if (reply.type === 'result') {
        this.pending?.(reply);
        this.pending = null;
      }
    });
  }

  static async start(setup: Omit<LoadSetup, 'maxConnections'> & { maxConnections?: number }): Promise<LoadProcess> {
    const child = spawn(process.execPath, ['bin/run-ts.js', 'bench/support/load-process-child.ts'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    const load = new LoadProcess(child);
    child.send({ type: 'setup', setup: { maxConnections: 64, ...setup } } satisfies LoadCommand);
    await new Promise<void>((resolve, reject) => {
      child.on('message', (reply: LoadReply) => reply.type === 'ready' && resolve());
      child.once('exit', (code) => reject(new Error(`the load generator exited (${code}) before it was ready:\n${load.output}`)));
    });
    return load;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** A run of this many seconds. */
  run(rate: number, seconds: number): Promise<LoadResult> {
    return this.begin(rate, seconds);
  }

  /** A run that goes on until its stop() is called; the promise resolves once every answer is in. */
  runUntilStopped(rate: number): { stop: () => void; result: Promise<LoadResult> } {
    const result = this.begin(rate, null);
    return { stop: () => this.child.send({ type: 'stop' } satisfies LoadCommand), result };
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.disconnect();
    await exited;
  }

  private begin(rate: number, seconds: number | null): Promise<LoadResult> {
    if (this.pending) throw new Error('a load run is already going');
    return new Promise<LoadResult>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the load generator exited (${code}) during a run:\n${this.output}`));
      this.child.once('exit', onExit);
      this.pending = (result) => {
        this.child.off('exit', onExit);
        resolve(result);
      };
      this.child.send({ type: 'start', rate, seconds } satisfies LoadCommand);
    });
  }
}

/** The latencies of the requests due in each window of `sliceSeconds` (a last, shorter one is dropped under half a slice). */
export function slices(result: LoadResult, sliceSeconds: number): LatencySummary[] {
  const windowMs = sliceSeconds * 1000;
  const groups: number[][] = [];
  for (let i = 0; i < result.due.length; i++) (groups[Math.floor(result.due[i]! / windowMs)] ??= []).push(result.latency[i]!);
  const lastDue = result.due.length > 0 ? Math.max(...result.due) : 0;
  const full = groups.map((group) => group ?? []);
  if (full.length > 1 && lastDue - (full.length - 1) * windowMs < windowMs / 2) full.pop();
  return full.map((group) => summariseLatencies(group));
}
