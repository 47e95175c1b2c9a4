import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** CPU seconds (utime + stime) in the text of a /proc stat file. */
function statCpuSeconds(stat: string): number {
  // Fields after the command name (which may hold spaces) start at field 3; utime and stime
  // are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export async function processCpuSeconds(statFile: string): Promise<number> {
  return statCpuSeconds(await readFile(statFile, 'utf8'));
}

/** A live process's CPU and that of its live descendants (the kernel adds children's only once they are reaped). */
async function treeCpuSeconds(pid: number): Promise<number> {
  let total = await processCpuSeconds(`/proc/${pid}/stat`);
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
    const children = await readFile(`/proc/${pid}/task/${tid}/children`, 'utf8').catch(() => '');
    for (const child of children.split(' ').filter(Boolean)) total += await treeCpuSeconds(Number(child)).catch(() => 0);
  }
  return total;
}

/**
 * Child processes of a benchmark: started with their output kept (the tail is shown when one
 * fails), stopped with SIGTERM so that they shut down cleanly (and write a CPU profile when asked),
 * and killed if they do not.
 */
export class Child {
  private output = '';
  readonly exited: Promise<number | null>;

  private constructor(
    readonly name: string,
    private readonly process: ChildProcess,
    /** Count the CPU of the child's own children too (a server that forks workers). */
    private readonly withDescendants = false,
  ) {
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString('utf8')).slice(-16_384);
    };
    process.stdout?.on('data', keep);
    process.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => process.once('exit', (code, signal) => resolve(code ?? (signal ? null : 0))));
  }

  static start(name: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; withDescendants?: boolean }): Child {
    const child = spawn(process.execPath, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    return new Child(name, child, options.withDescendants);
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  get running(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  /** The last 16 KiB the child wrote, for error messages. */
  get recentOutput(): string {
    return this.output.trim();
  }

  async stop(graceMs = 15_000): Promise<void> {
    if (!this.running) return;
    this.process.kill('SIGTERM');
    const stopped = await Promise.race([this.exited.then(() => true), sleep(graceMs).then(() => false)]);
    if (!stopped && this.running) {
      this.process.kill('SIGKILL');
      await this.exited;
    }
  }

  /**
   * CPU seconds (user + system) the child has used so far, from /proc; null where there is no
   * /proc. The kernel counts in clock ticks, 100 a second on Linux.
   */
  /**
   * CPU seconds the process has used, all its threads; `mainThread`: only its main thread (the
   * event loop), without worker threads, V8's garbage-collection helpers and libuv's pool.
   */
  async cpuSeconds(mainThread = false): Promise<number | null> {
    if (this.process.pid === undefined) return null;
    try {
      const pid = this.process.pid;
      if (mainThread) return await processCpuSeconds(`/proc/${pid}/task/${pid}/stat`);
      return this.withDescendants ? await treeCpuSeconds(pid) : await processCpuSeconds(`/proc/${pid}/stat`);
    } catch {
      return null;
    }
  }

  /** CPU seconds used so far by each thread of the process, by thread name (threads of one name summed). */
  async threadCpuSeconds(): Promise<Map<string, number>> {
    const byName = new Map<string, number>();
    const pid = this.process.pid;
    if (pid === undefined) return byName;
    for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
      try {
        const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const label = tid === String(pid) ? 'main thread' : name;
        byName.set(label, (byName.get(label) ?? 0) + statCpuSeconds(stat));
      } catch {
        // The thread ended between the listing and the read.
      }
    }
    return byName;
  }

  /** For a signal handler that cannot wait. */
  killNow(): void {
    if (this.running) this.process.kill('SIGKILL');
  }
}

/** A port free right now on 127.0.0.1 (the child binds it a moment later). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls until the URL answers 200, the child dies, or the time is up. */
export async function waitUntilReady(child: Child, url: string, init: RequestInit = {}, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastProblem = 'no answer yet';
  while (Date.now() < deadline) {
    if (!child.running) {
      throw new Error(`${child.name} exited before it was ready. Its output:\n${child.recentOutput || '(none)'}`);
    }
    try {
      const response = await fetch(url, { ...init, signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
      lastProblem = `status ${response.status}`;
    } catch (error) {
      lastProblem = (error as Error).message;
    }
    await sleep(100);
  }
  throw new Error(`${child.name} was not ready at ${url} after ${timeoutMs / 1000} s (${lastProblem}). Its output:\n${child.recentOutput || '(none)'}`);
}
