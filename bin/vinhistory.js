#!/usr/bin/env node
// Runs the compiled CLI from dist/ (built by `npm ci`, or `npm run build`) when that build is at
// least as new as every file under src/; otherwise the TypeScript sources through tsx, so that
// an edited source never runs stale (docs/decisions.md).
import { buildState } from './build-state.js';

let main;
if (buildState() === 'current') {
  ({ main } = await import('../dist/cli/main.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
await main(process.argv);
