import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, cliEnv, freePort, makeDataDir } from './run-cli.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface Started {
  top: ChildProcess;
  port: number;
  exited: Promise<number | null>;
  logs: string[];
}

const started: ChildProcess[] = [];
const dirs: Array<{ remove(): void }> = [];

afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) dir.remove();
});

/** Starts the server the way the docs tell operators to (`npm start`, or the launcher), and waits until it listens. */
async function start(how: 'npm' | 'launcher'): Promise<Started> {
  const data = makeDataDir();
  dirs.push(data);
  const port = await freePort();
  const env = cliEnv(data.dir, { PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' });
  const top =
    how === 'npm'
      ? spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(process.execPath, [BIN, 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(top);
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => top.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not start:\n${logs.join('\n')}`)), 90_000);
    for (const stream of [top.stdout, top.stderr]) {
      readline.createInterface({ input: stream }).on('line', (line) => {
        logs.push(line);
        // After the demo banner: the start is over, and the slow request is not racing the demo load.
        if (line.includes('API documentation:')) {
          clearTimeout(timer);
          resolve();
        }
      });
    }
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening:\n${logs.join('\n')}`));
    });
  });
  return { top, port, exited, logs };
}

/** Every process under pid, at any depth (npm → node → esbuild, where tsx runs the sources). */
function descendants(pid: number): number[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    return [];
  }
  const children = out.split('\n').map((line) => Number(line.trim())).filter((n) => n > 0);
  return children.flatMap((child) => [child, ...descendants(child)]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A request whose body is still arriving: it is in flight when the signal comes, and the rest is sent
 * after it. Its answer (401: no token) shows that the server finished it instead of dropping it.
 */
async function slowRequest(port: number): Promise<{ socket: Socket; finish(): Promise<string> }> {
  const body = JSON.stringify({ vin: '1HGCV1F3XLA012873' });
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let answer = '';
  socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(`POST /api/v1/search HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
  socket.write(body.slice(0, 5));
  return {
    socket,
    finish: async () => {
      socket.write(body.slice(5));
      await closed;
      return answer;
    },
  };
}

async function waitGone(pids: number[]): Promise<number[]> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline && pids.some(alive)) await new Promise((resolve) => setTimeout(resolve, 50));
  return pids.filter(alive);
}

describe('stop signals', () => {
  it('SIGTERM to npm start: the in-flight request is answered, npm exits 0, nothing is left running', async () => {
    const server = await start('npm');
    const below = descendants(server.top.pid!);
    expect(below.length).toBeGreaterThan(0);
    const request = await slowRequest(server.port);
    server.top.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 700));
    const answer = await request.finish();
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(await server.exited).toBe(0);
    expect(await waitGone(below)).toEqual([]);
    expect(server.logs.some((line) => line.includes('shut down cleanly'))).toBe(true);
  }, 120_000);

  it('SIGINT to the launcher (node bin/vinhistory.js serve) drains the same way and exits 0', async () => {
    const server = await start('launcher');
    const below = descendants(server.top.pid!);
    const request = await slowRequest(server.port);
    server.top.kill('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(await request.finish()).toMatch(/^HTTP\/1\.1 401 /);
    expect(await server.exited).toBe(0);
    expect(await waitGone([server.top.pid!, ...below])).toEqual([]);
  }, 120_000);

  it('Ctrl-C under npm start (SIGINT to npm and to the server at once) is one stop, not an abort', async () => {
    const server = await start('npm');
    const below = descendants(server.top.pid!);
    const request = await slowRequest(server.port);
    // The terminal signals the whole foreground group; npm forwards its own copy to the server.
    const serverPid = descendants(server.top.pid!)[0]!;
    for (const pid of [server.top.pid!, serverPid]) process.kill(pid, 'SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(await request.finish()).toMatch(/^HTTP\/1\.1 401 /);
    expect(await server.exited).toBe(0);
    expect(await waitGone(below)).toEqual([]);
  }, 120_000);
});
