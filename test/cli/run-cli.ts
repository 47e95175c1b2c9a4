import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase, type Db } from '../../src/storage/database.ts';
import { createRepositories, type Repositories } from '../../src/storage/repositories/index.ts';

export const BIN = fileURLToPath(new URL('../../bin/vinhistory.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a spawned CLI: only what it needs, so that a DATABASE_URL or NODE_ENV of the
 * developer's shell cannot leak into a test.
 */
export function cliEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: process.env.TMPDIR,
    DATA_DIR: dataDir,
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    ...extra,
  };
}

/** Runs `node bin/vinhistory.js ...args` to completion, as an operator's script would. */
export function runCli(args: string[], options: { dataDir: string; env?: Record<string, string>; input?: string }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { env: cliEnv(options.dataDir, options.env), timeout: 30_000 },
      (error, stdout, stderr) => {
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- an ExecFileException, an Error, that the narrowing above hides from the rule.
        if (error && typeof error.code !== 'number') return reject(error);
        resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
      },
    );
    child.stdin!.end(options.input ?? '');
  });
}

/**
 * Runs the CLI's main(argv) inside the test process, as `node bin/vinhistory.js ...args` would
 * run it, for the cases that need no process of their own (no stdin, no signal, no server): no
 * start-up to pay, and the same program, services and database. While it runs, the process's
 * environment is the spawned CLI's alone (cliEnv), stdout and stderr are captured, and the exit
 * status is read from process.exitCode, where main leaves it. Calls run one at a time (the
 * environment and the streams are the process's), in the order they were made.
 */
export function runCliInProcess(args: string[], options: { dataDir: string; env?: Record<string, string> }): Promise<CliResult> {
  const run = inProcessQueue.then(() => runMain(args, options));
  inProcessQueue = run.catch(() => {});
  return run;
}

let inProcessQueue: Promise<unknown> = Promise.resolve();

type Write = typeof process.stdout.write;

/** A stream's write that appends to `sink` instead (with the callback a caller may wait on). */
function capture(sink: (text: string) => void): Write {
  return ((chunk: string | Uint8Array, encoding?: BufferEncoding | ((error?: Error | null) => void), callback?: (error?: Error | null) => void) => {
    sink(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(typeof encoding === 'string' ? encoding : 'utf8'));
    const done = typeof encoding === 'function' ? encoding : callback;
    if (done) process.nextTick(done);
    return true;
  });
}

/** Makes the stream's isTTY false until the returned function puts back what it was. */
function notATerminal(stream: NodeJS.WriteStream): () => void {
  const own = Object.getOwnPropertyDescriptor(stream, 'isTTY');
  Object.defineProperty(stream, 'isTTY', { value: false, configurable: true, writable: true });
  return () => {
    if (own) Object.defineProperty(stream, 'isTTY', own);
    else delete (stream as { isTTY?: boolean }).isTTY;
  };
}

async function runMain(args: string[], options: { dataDir: string; env?: Record<string, string> }): Promise<CliResult> {
  const { main } = await import('../../src/cli/main.ts');
  const savedEnv = { ...process.env };
  const savedExitCode = process.exitCode;
  const stdoutWrite = process.stdout.write;
  const stderrWrite = process.stderr.write;
  const result = { code: 0, stdout: '', stderr: '' };
  // vitest's own variables stay: its worker reads them while the command runs.
  for (const key of Object.keys(process.env)) if (!key.startsWith('VITEST')) delete process.env[key];
  for (const [key, value] of Object.entries(cliEnv(options.dataDir, options.env))) if (value !== undefined) process.env[key] = value;
  process.exitCode = undefined;
  process.stdout.write = capture((text) => (result.stdout += text));
  process.stderr.write = capture((text) => (result.stderr += text));
  // A spawned CLI writes to pipes: no progress bar, whatever the test runner's streams are.
  const restoreStdoutTty = notATerminal(process.stdout);
  const restoreStderrTty = notATerminal(process.stderr);
  try {
    await main([process.execPath, BIN, ...args]);
    result.code = Number(process.exitCode ?? 0);
  } finally {
    process.stdout.write = stdoutWrite;
    process.stderr.write = stderrWrite;
    restoreStdoutTty();
    restoreStderrTty();
    process.exitCode = savedExitCode;
    for (const key of Object.keys(process.env)) delete process.env[key];
    Object.assign(process.env, savedEnv);
  }
  return result;
}

/** Starts `vinhistory serve`; the caller stops it with stopServer. */
export function startServe(dataDir: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [BIN, 'serve'], { env: cliEnv(dataDir, env), stdio: ['ignore', 'pipe', 'pipe'] });
}

export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export function makeDataDir(): { dir: string; remove(): void; file(name: string, content: string | Buffer): string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'vinhistory-cli-'));
  return {
    dir,
    remove: () => rmSync(dir, { recursive: true, force: true }),
    /** Writes a file into the folder and returns its path. */
    file: (name, content) => {
      const full = path.join(dir, name);
      writeFileSync(full, content);
      return full;
    },
  };
}

/** Opens the SQLite database a CLI run used, to check what it wrote through the repositories. */
export async function openCliDatabase(dataDir: string): Promise<{ db: Db; repos: Repositories }> {
  const db = await openDatabase({ kind: 'sqlite', file: path.join(dataDir, 'vinhistory.sqlite') });
  return { db, repos: createRepositories(db) };
}
