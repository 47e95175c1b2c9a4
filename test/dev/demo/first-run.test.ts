import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_EMAIL, DEMO_VIN } from '../../../src/dev/demo/first-run.ts';
import { freePort, makeDataDir, openCliDatabase, startServe, stopServer } from '../../cli/run-cli.ts';

interface Running {
  child: ChildProcess;
  baseUrl: string;
  output: () => { stdout: string; stderr: string };
}

const running: ChildProcess[] = [];
const dataDirs: { remove(): void }[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map(stopServer));
  for (const dir of dataDirs.splice(0)) dir.remove();
});

/** Starts `vinhistory serve` and resolves once /healthz answers, or rejects with its output if it dies. */
async function serve(dataDir: string, env: Record<string, string> = {}): Promise<Running> {
  const port = await freePort();
  const child = startServe(dataDir, { PORT: String(port), HOST: '127.0.0.1', ...env });
  running.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 25_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}:\n${stdout}\n${stderr}`);
    const healthy = await fetch(`${baseUrl}/healthz`).then((response) => response.ok, () => false);
    if (healthy) return { child, baseUrl, output: () => ({ stdout, stderr }) };
    if (Date.now() > deadline) throw new Error(`serve did not answer within 25 s:\n${stdout}\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The parent reads the child's pipe asynchronously: give output written before listen() time to arrive. */
async function waitForOutput(server: Running, pattern: RegExp): Promise<string> {
  const deadline = Date.now() + 5_000;
  while (!pattern.test(server.output().stdout) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return server.output().stdout;
}

describe('vinhistory serve: the first-run demo', () => {
  it('loads the demo data once, prints a working token and curl line, and stays quiet on the next start', async () => {
    const data = makeDataDir();
    dataDirs.push(data);

    const first = await serve(data.dir);
    const stdout = await waitForOutput(first, /curl .*\n/);
    const tokens = stdout.match(/vh_live_[0-9A-Za-z]{32}/g) ?? [];
    expect(tokens.length, stdout).toBeGreaterThan(0);
    const token = tokens[0]!;
    expect(new Set(tokens)).toEqual(new Set([token]));
    const port = new URL(first.baseUrl).port;
    expect(stdout).toContain(`curl -H "Authorization: ${token}" "http://localhost:${port}/api/v1/search?vin=${DEMO_VIN}"`);

    const response = await fetch(`${first.baseUrl}/api/v1/search?vin=${DEMO_VIN}`, { headers: { authorization: token } });
    expect(response.status).toBe(200);
    const report = (await response.json()) as { vin: string; lots: { auction: string; lot_id: number }[] };
    expect(report.vin).toBe(DEMO_VIN);
    expect(report.lots).toContainEqual(expect.objectContaining({ auction: 'copart', lot_id: 26519090 }));
    await stopServer(first.child);

    const second = await serve(data.dir);
    await stopServer(second.child);
    expect(second.output().stdout).not.toMatch(/first run|vh_live_/);

    const { db, repos } = await openCliDatabase(data.dir);
    try {
      const account = await repos.accounts.findByEmail(DEMO_EMAIL);
      expect(await repos.tokens.listForAccount(account!.id)).toHaveLength(1);
    } finally {
      await db.close();
    }
  });

  it('loads nothing with NODE_ENV=production', async () => {
    const data = makeDataDir();
    dataDirs.push(data);
    const server = await serve(data.dir, { NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.com' });
    await stopServer(server.child);
    expect(server.output().stdout).not.toMatch(/first run|vh_live_/);

    const { db, repos } = await openCliDatabase(data.dir);
    try {
      expect(await repos.lots.count()).toBe(0);
      expect(await repos.accounts.findByEmail(DEMO_EMAIL)).toBeUndefined();
    } finally {
      await db.close();
    }
  });
});
