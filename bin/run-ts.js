#!/usr/bin/env node
// Runs one TypeScript file (a benchmark or a script) through tsx: `node bin/run-ts.js file.ts [args]`.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

register();
const [, , file, ...rest] = process.argv;
if (!file) {
  console.error('usage: run-ts.js <file.ts> [args...]');
  process.exit(2);
}
process.argv = [process.argv[0], path.resolve(file), ...rest];
await import(pathToFileURL(path.resolve(file)).href);
