#!/usr/bin/env node
// `npm run check`: the typecheck and the linter side by side, the first step of `npm test`.
// Each builds a TypeScript program of the whole project on a core of its own (tsc about 55 s of
// CPU, typed ESLint about 115 s on a 2-core CI machine), so one after the other they cost the
// suite their sum and side by side about the longer. Each one's output is printed whole when it
// ends, never interleaved, and the step fails if either does.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './build-state.js';

const bin = (name) => path.join(ROOT, 'node_modules', '.bin', name);

const steps = [
  { name: 'typecheck', command: bin('tsc'), args: ['--noEmit'] },
  { name: 'lint', command: bin('eslint'), args: ['src', 'test', 'bench', 'sdks'] },
];

function run({ name, command, args }) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (error) => resolve({ name, ok: false, output: Buffer.from(`${error.message}\n`), seconds: 0 }));
    child.on('close', (code, signal) => {
      const seconds = (performance.now() - started) / 1000;
      resolve({ name, ok: code === 0, output: Buffer.concat(output), seconds, code: code ?? signal });
    });
  });
}

const results = await Promise.all(steps.map(run));
for (const result of results) {
  if (result.output.length > 0) process.stdout.write(result.output);
  const outcome = result.ok ? 'passed' : `failed (${result.code})`;
  console.log(`${result.name} ${outcome} in ${result.seconds.toFixed(1)} s`);
}
process.exitCode = results.every((result) => result.ok) ? 0 : 1;
