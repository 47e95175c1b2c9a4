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
        if (error && typeof error.code !== 'number') return reject(error);
        resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
      },
    );
    child.stdin!.end(options.input ?? '');
  });
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
