import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * The OS scheduling niceness (0-19) that threads started within `run` give themselves. A feed's pull
 * starts its reading and storing threads inside it (src/feeds/feed-puller.ts), so that the code
 * starting them (the ingest pipeline) needs no option for it: the kernel then runs the searches'
 * threads first whenever they want a core, and the pull still takes every core they leave idle.
 */
const threadNiceness = new AsyncLocalStorage<number>();

export function withThreadNiceness<T>(niceness: number, run: () => T): T {
  return threadNiceness.run(niceness, run);
}

/**
 * Lowers the calling thread's own priority, first thing in a worker. Linux's setpriority() on a
 * thread id applies to that thread alone (nice is per thread there); `/proc/thread-self` names it.
 * Elsewhere there is no per-thread niceness through Node, and the thread runs as it is.
 */
const lowerOwnPriority = (niceness: number) => `(process.platform === 'linux' ? Promise.all([import('node:fs'), import('node:os')]).then(([fs, os]) => {
  try { os.setPriority(Number(fs.readlinkSync('/proc/thread-self').split('/').pop()), ${niceness}); } catch {}
}) : Promise.resolve())`;

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
  const niceness = threadNiceness.getStore() ?? 0;
  const first = niceness > 0 ? lowerOwnPriority(niceness) : 'Promise.resolve()';
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
