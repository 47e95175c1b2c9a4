#!/usr/bin/env node
// The CLI runs the TypeScript sources directly through tsx, so `npx vinhistory` works right after
// `npm ci` with no build step (see docs/decisions.md).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
await main(process.argv);
