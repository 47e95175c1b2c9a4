#!/usr/bin/env node
// Compiles src/ to dist/ with tsc (tsconfig.build.json: `.ts` specifiers rewritten to `.js`) and
// copies src's other files (views, stylesheets, translations, legal placeholders) beside the
// output, so that paths computed from import.meta.url find them in either tree. `npm ci` runs it
// (the prepare script); `--if-stale` skips a build that is already current (the test setup).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { buildState, ROOT, STAMP } from './build-state.js';

const ifStale = process.argv.includes('--if-stale');
if (ifStale && buildState() === 'current') process.exit(0);

let tsc;
try {
  tsc = path.join(path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
} catch {
  // `npm ci --omit=dev` leaves TypeScript out: the CLI then runs the sources through tsx.
  console.error('bin/build.js: TypeScript is not installed, so there is no build; the CLI runs the sources through tsx.');
  process.exit(0);
}

const started = new Date();
const dist = path.join(ROOT, 'dist');
// Built aside and swapped in whole: a CLI starting meanwhile sees the old build or none (and then
// runs the sources), never half of one.
const next = path.join(ROOT, `dist.next-${process.pid}`);
const old = path.join(ROOT, `dist.old-${process.pid}`);
rmSync(next, { recursive: true, force: true });
try {
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', next], { stdio: 'inherit' });
  } catch (error) {
    // Status 2: type errors, every file emitted all the same. That output is what tsx would run
    // from the sources, so it is kept (a test can run mid-refactoring, as it could under tsx);
    // `npm test` refuses the type errors themselves.
    if (error?.status !== 2) throw error;
    console.error('bin/build.js: type errors (above); dist/ is built all the same, as tsx would run the sources.');
  }
  cpSync(path.join(ROOT, 'src'), next, { recursive: true, filter: (source) => !source.endsWith('.ts') });
  const stamp = path.join(next, STAMP);
  writeFileSync(stamp, `built from src/ at ${started.toISOString()}\n`);
  utimesSync(stamp, started, started);
  if (existsSync(dist)) renameSync(dist, old);
  renameSync(next, dist);
} catch (error) {
  rmSync(next, { recursive: true, force: true });
  console.error(`bin/build.js: the build failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
} finally {
  rmSync(old, { recursive: true, force: true });
}
console.error(`bin/build.js: built dist/ in ${((Date.now() - started.getTime()) / 1000).toFixed(1)} s`);
