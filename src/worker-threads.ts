import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { CHRT } from './linux-tools.ts';

/**
 * The OS priority that threads started within `withThreadPriority` give themselves, first thing.
 * `idle`: Linux's SCHED_IDLE (through util-linux's `chrt`), on top of `niceness`, which is what
 * the thread keeps where there is no chrt or the kernel refuses. A niceness alone (0-19) is a
 * smaller weight in the kernel's share; SCHED_IDLE also makes a waking search take the core from
 * the thread at once and lets the kernel count a core running only such threads as free when it
 * places the search (docs/decisions.md, "Feeds the service pulls itself").
 */
export type ThreadPriority = { readonly idle: boolean; readonly niceness: number };

/** As the thread that starts the worker: no change. */
export const NORMAL_PRIORITY: ThreadPriority = Object.freeze({ idle: false, niceness: 0 });

/**
 * A feed's pull starts its reading and storing threads inside it (src/feeds/feed-puller.ts), so
 * that the code starting them (the ingest pipeline) needs no option for it: the kernel then runs
 * the searches' threads first whenever they want a core, and the pull still takes every core they
 * leave idle. Threads such a thread starts (tsx's loader thread, from the sources) inherit it: on
 * Linux a new thread takes its creator's policy and niceness.
 */
const threadPriority = new AsyncLocalStorage<ThreadPriority>();

export function withThreadPriority<T>(priority: ThreadPriority, run: () => T): T {
  return threadPriority.run(priority, run);
}

/**
 * A pull's threads give way to the server's counted requests (GiveWay, below): workers started
 * within withGiveWay find the setting in their workerData (`giveWayOf`), so that, as with the
 * priority, the ingest code that starts them needs no option.
 */
const giveWaySetting = new AsyncLocalStorage<GiveWaySetting>();

export function withGiveWay<T>(setting: GiveWaySetting | null, run: () => T): T {
  return setting === null ? run() : giveWaySetting.run(setting, run);
}

/** In a worker: its GiveWay if it was started within withGiveWay, else null. */
export function giveWayOf(data: unknown): GiveWay | null {
  const setting = (data as { [GIVE_WAY_KEY]?: GiveWaySetting } | null)?.[GIVE_WAY_KEY];
  return setting === undefined ? null : new GiveWay(setting);
}

const GIVE_WAY_KEY = 'giveWay';

/** The priority that workers started here take: withThreadPriority's, or as the caller's thread. */
export function currentThreadPriority(): ThreadPriority {
  return threadPriority.getStore() ?? NORMAL_PRIORITY;
}

/**
 * The code a worker runs first to lower its own priority, as a JavaScript expression (a promise).
 * Linux's setpriority() and sched_setscheduler() on a thread id apply to that thread alone;
 * `/proc/thread-self` names it. The niceness is set first so that it holds wherever chrt fails; a
 * thread under SCHED_IDLE ignores it. Elsewhere there is no per-thread priority through Node, and
 * the thread runs as it is. Exported for benchmarks that start bare workers (bench/feeds.ts).
 */
export function lowerOwnPriorityCode(priority: ThreadPriority): string {
  if (process.platform !== 'linux' || (!priority.idle && priority.niceness <= 0)) return 'Promise.resolve()';
  const chrt = priority.idle ? CHRT : null;
  return `Promise.all([import('node:fs'), import('node:os'), import('node:child_process')]).then(([fs, os, cp]) => {
  const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
  try { os.setPriority(tid, ${priority.niceness}); } catch {}
  ${chrt === null ? '' : `try { cp.execFileSync(${JSON.stringify(chrt)}, ['--idle', '--pid', '0', String(tid)], { stdio: 'ignore' }); } catch {}`}
})`;
}

/**
 * Starts a worker thread on a module beside the caller's (`name` without extension). The code runs
 * either from the sources (under tsx or vitest) or from the build (dist/, where tsc has made it
 * .js): the worker's module is the caller's sibling in the same tree. From the sources the worker
 * loads TypeScript the way bin/vinhistory.js does, through tsx's loader registered inside the
 * worker before the module is imported (a loader given in execArgv does not reach a worker's
 * entry module on Node 20); the build needs no loader.
 */
export function startModuleWorker(callerUrl: string, name: string, options: Omit<WorkerOptions, 'eval'> = {}): Worker {
  const fromSources = callerUrl.endsWith('.ts');
  const file = new URL(`./${name}${fromSources ? '.ts' : '.js'}`, callerUrl).href;
  const first = lowerOwnPriorityCode(currentThreadPriority());
  const bootstrap = fromSources
    ? `${first}.then(() => import(${JSON.stringify(tsxApi())}))
  .then(({ register }) => { register(); return import(${JSON.stringify(file)}); });`
    : `${first}.then(() => import(${JSON.stringify(file)}));`;
  const giveWay = giveWaySetting.getStore();
  const data: unknown = options.workerData;
  // An object's workerData carries the setting beside the job (every worker of a pull has one).
  const workerData: unknown = giveWay !== undefined && typeof data === 'object' && data !== null ? { ...data, [GIVE_WAY_KEY]: giveWay } : data;
  return new Worker(bootstrap, { ...options, workerData, eval: true });
}

function tsxApi(): string {
  // require.resolve finds the CommonJS build of tsx/esm/api; the ES module build sits beside it.
  return pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
}

/**
 * The server's counted API requests in flight (searches, the catalogue, the market, a lot and its
 * history), in memory the pull's threads share, so that they give way while one is answered
 * (GiveWay below; issue 25). Slot 0 is the count, slot 1 the requests begun so far (it moves with
 * every request, so a pull knows that requests came recently even when none is in flight at the
 * moment it looks); the rest are GiveWay's own figures, for the benchmark. The event loop counts
 * with two atomic additions a request (src/http/plugins/requests-in-flight.ts); whoever takes the
 * count to 0 wakes the threads waiting for it.
 */
export class RequestsInFlight {
  readonly buffer: SharedArrayBuffer;
  private readonly slots: Int32Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(SLOTS * 4)) {
    this.buffer = buffer;
    this.slots = new Int32Array(buffer);
  }

  begin(): void {
    Atomics.add(this.slots, BEGUN, 1);
    Atomics.add(this.slots, IN_FLIGHT, 1);
  }

  /** Once for each begin(): the caller keeps to that (a request's end is seen more than one way). */
  end(): void {
    if (Atomics.sub(this.slots, IN_FLIGHT, 1) === 1) Atomics.notify(this.slots, IN_FLIGHT);
  }

  get inFlight(): number {
    return Atomics.load(this.slots, IN_FLIGHT);
  }

  /** Requests begun so far (wraps past 2^31: compare for change only). */
  get begun(): number {
    return Atomics.load(this.slots, BEGUN);
  }

  /** How the pull's threads gave way so far: their pauses, the pauses the floor cut short, and the time paused. */
  gaveWay(): { pauses: number; floorHits: number; pausedMs: number } {
    return { pauses: Atomics.load(this.slots, PAUSES), floorHits: Atomics.load(this.slots, FLOOR_HITS), pausedMs: Atomics.load(this.slots, PAUSED_100US) / 10 };
  }
}

const IN_FLIGHT = 0;
const BEGUN = 1;
const PAUSES = 2;
const FLOOR_HITS = 3;
/** Tenths of a millisecond: 2^31 of them is 59 hours of pauses. */
const PAUSED_100US = 4;
const SLOTS = 5;

/** What a pull's thread is given to give way with: the shared count, and the longest pause (0: never pause). */
export interface GiveWaySetting {
  buffer: SharedArrayBuffer;
  maxPauseMs: number;
}

/**
 * A thread of a pull giving way to the server's counted requests: pause() waits while any is in
 * flight (Atomics.wait, woken when the count drops to 0), between two units of the thread's work
 * (a chunk read, a transaction stored). The floor: a pause lasts at most `maxPauseMs`; one that
 * lasted that long is followed by `maxPauseMs / RUN_AFTER_FLOOR` of work in which the thread does
 * not pause, so that requests that never stop slow a pull to about a tenth of its threads' time
 * but never stop it (docs/decisions.md, "A pull that gives way"). For worker threads only: the
 * wait blocks the thread.
 */
export class GiveWay {
  private readonly slots: Int32Array;
  private runUntil = -Infinity;

  constructor(
    private readonly setting: GiveWaySetting,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.slots = new Int32Array(setting.buffer);
  }

  /** Requests begun so far (RequestsInFlight.begun): a figure that moves while requests come. */
  get begun(): number {
    return Atomics.load(this.slots, BEGUN);
  }

  /** Waits while a counted request is in flight, up to the floor; returns how long it waited, ms. */
  pause(): number {
    if (this.setting.maxPauseMs <= 0 || Atomics.load(this.slots, IN_FLIGHT) <= 0) return 0;
    const started = this.now();
    if (started < this.runUntil) return 0;
    const deadline = started + this.setting.maxPauseMs;
    let floor = false;
    for (;;) {
      const count = Atomics.load(this.slots, IN_FLIGHT);
      if (count <= 0) break;
      const left = deadline - this.now();
      if (left <= 0) {
        floor = true;
        break;
      }
      // Returns at once if the count moved meanwhile; the loop looks again.
      Atomics.wait(this.slots, IN_FLIGHT, count, left);
    }
    const ended = this.now();
    if (floor) {
      this.runUntil = ended + this.setting.maxPauseMs / RUN_AFTER_FLOOR;
      Atomics.add(this.slots, FLOOR_HITS, 1);
    }
    Atomics.add(this.slots, PAUSES, 1);
    Atomics.add(this.slots, PAUSED_100US, Math.round((ended - started) * 10));
    return ended - started;
  }
}

/** After a pause the floor cut short, the thread works on for the pause's length over this before it may pause again. */
export const RUN_AFTER_FLOOR = 10;
