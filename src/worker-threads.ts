import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { CHRT } from './linux-tools.ts';

export { CHRT };

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
  return new Worker(bootstrap, { ...options, eval: true });
}

function tsxApi(): string {
  // require.resolve finds the CommonJS build of tsx/esm/api; the ES module build sits beside it.
  return pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
}
