import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * A server process under `valgrind --tool=callgrind`, instrumentation off until `start()`, whose
 * instructions are counted over spans the caller marks (`zero()`, then `dump()`). Counting
 * instructions rather than time makes a comparison independent of what else the machine runs
 * (bench/search-instructions.ts explains the method); this class lets one server count several
 * kinds of request apart, each span dumped to its own file.
 */
export class CallgrindServer {
  private stderr = '';
  private dumps = 0;
  private readonly exited: Promise<void>;

  private constructor(
    private readonly process: ChildProcess,
    private readonly outDir: string,
    /** valgrind names its control pipes after $HOST, which the server's environment sets: the control commands must look for the same names. */
    private readonly controlEnv: NodeJS.ProcessEnv,
  ) {
    process.stderr?.on('data', (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-8192)));
    this.exited = new Promise((resolve) => process.once('exit', () => resolve()));
  }

  /** Starts `node <args>` under callgrind, instrumentation off (start-up and warm-up are not counted). */
  static async launch(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<CallgrindServer> {
    const outDir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-callgrind-'));
    const child = spawn(
      'valgrind',
      ['--tool=callgrind', '--instr-atstart=no', '--trace-children=no', `--callgrind-out-file=${outDir}/callgrind.out.%p`, process.execPath, ...args],
      { cwd: options.cwd, env: options.env, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    return new CallgrindServer(child, outDir, { ...process.env, HOST: options.env.HOST });
  }

  get recentOutput(): string {
    return this.stderr.trim();
  }

  /** Switches instrumentation on: valgrind translates the code afresh, so warm it up again before `zero()`. */
  async start(): Promise<void> {
    await this.control('-i', 'on');
  }

  async zero(): Promise<void> {
    await this.control('-z');
  }

  /** Dumps the counters since the last `zero()`: the instructions every thread executed, summed. */
  async dump(): Promise<number> {
    await this.control('-d');
    this.dumps += 1;
    const suffix = `.${this.dumps}`;
    const name = (await readdir(this.outDir)).find((file) => file.startsWith('callgrind.out') && file.endsWith(suffix));
    if (name === undefined) throw new Error(`callgrind wrote no dump ${suffix} in ${this.outDir}`);
    let total = 0;
    for (const match of (await readFile(path.join(this.outDir, name), 'utf8')).matchAll(/^summary:\s+(\d+)/gm)) total += Number(match[1]);
    return total;
  }

  async stop(): Promise<void> {
    if (this.process.exitCode === null && this.process.signalCode === null) {
      this.process.kill('SIGTERM');
      const timer = setTimeout(() => this.process.kill('SIGKILL'), 30_000);
      await this.exited;
      clearTimeout(timer);
    }
    if (process.env.KEEP_CALLGRIND) process.stderr.write(`kept ${this.outDir}\n`);
    else await rm(this.outDir, { recursive: true, force: true });
  }

  /** For a signal handler: no waiting. */
  killNow(): void {
    this.process.kill('SIGKILL');
  }

  private control(...flags: string[]): Promise<void> {
    const pid = String(this.process.pid);
    return new Promise((resolve, reject) => {
      const child = spawn('callgrind_control', [...flags, pid], { stdio: ['ignore', 'pipe', 'pipe'], env: this.controlEnv });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`callgrind_control ${flags.join(' ')} ${pid} exited ${code}: ${out}`))));
    });
  }
}
