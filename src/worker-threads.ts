import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

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
  const bootstrap = fromSources
    ? `import(${JSON.stringify(tsxApi())})
  .then(({ register }) => { register(); return import(${JSON.stringify(file)}); });`
    : `import(${JSON.stringify(file)});`;
  return new Worker(bootstrap, { ...options, eval: true });
}

function tsxApi(): string {
  // require.resolve finds the CommonJS build of tsx/esm/api; the ES module build sits beside it.
  return pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
}
