import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/vinhistory.js');

export interface Instance {
  url: string;
  process: ChildProcess;
  /** Everything the process logged, one JSON line each. */
  logs: string[];
  exited: Promise<number | null>;
}

/** Starts `vinhistory serve` as a real process on a free port and waits until it listens. */
export async function startInstance(env: Record<string, string>): Promise<Instance> {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'production', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    // Generous: several engineers' test runs may share this machine's cores. One that never starts is not left behind.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`instance did not start:\n${logs.join('\n')}`));
    }, 60_000);
    for (const stream of [child.stdout, child.stderr]) {
      readline.createInterface({ input: stream }).on('line', (line) => {
        logs.push(line);
        const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
    }
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`instance exited with ${code} before listening:\n${logs.join('\n')}`));
    });
  });
  return { url, process: child, logs, exited };
}

export async function stopInstance(instance: Instance): Promise<void> {
  if (instance.process.exitCode === null && instance.process.signalCode === null) instance.process.kill('SIGTERM');
  await instance.exited;
}

/** A counter or gauge of an instance's /metrics (loopback may read it), summed over its label sets. */
export async function metricValue(instance: Instance, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${instance.url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const set = match[2] ?? '';
    if (Object.entries(labels).every(([key, value]) => set.includes(`${key}="${value}"`))) total += Number(match[3]);
  }
  return total;
}
