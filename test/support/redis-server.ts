import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import readline from 'node:readline';

/**
 * A redis-server of the test's own, on a free port and with nothing on disk, so that a test can kill
 * it and start it again (empty, as a restarted cache comes back) without touching the server other
 * suites share.
 */
export class RedisServerProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServerProcess> {
    const server = new RedisServerProcess(await freePort());
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** Starts the server (again, on the same port) and resolves once it accepts connections. */
  async restart(): Promise<void> {
    if (this.child) throw new Error('redis-server is already running');
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const lines: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${lines.join('\n')}`)), 10_000);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`redis-server could not be started (is it installed?): ${error.message}`));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code} before it was ready:\n${lines.join('\n')}`));
      });
      readline.createInterface({ input: child.stdout }).on('line', (line) => {
        lines.push(line);
        if (line.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  }

  /** Kills the server the hard way (SIGKILL: no goodbye to the clients) and waits until it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    child.kill('SIGKILL');
    await this.exited;
  }

  async stop(): Promise<void> {
    await this.kill();
  }
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
