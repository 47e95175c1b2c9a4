import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, testConfig, type TestApp } from '../support/app.ts';
import { IN_CI } from '../support/env.ts';
import { createCustomer, makeLot, validVin } from '../support/fixtures.ts';
import { freePort } from '../cli/run-cli.ts';

/**
 * The verification recipe of docs/reports.md, run as a reader of a report would run it: the Node
 * (jose) and Python (cryptography) samples fetch a report's signed JSON and the JWK Set from a
 * live server and say "genuine", and say "not genuine" once one byte of the snapshot is changed or
 * the report differs from what was signed. Python is skipped only when python3 lacks
 * `cryptography` and CI is not set.
 */
const sample = (name: string) => fileURLToPath(new URL(`../../docs/report-samples/${name}`, import.meta.url));
const pythonReady = spawnSync('python3', ['-c', 'import cryptography'], { stdio: 'ignore' }).status === 0;

const RUNNERS = [
  { language: 'Node (jose)', command: process.execPath, file: 'verify-report.mjs', available: true },
  { language: 'Python (cryptography)', command: 'python3', file: 'verify-report.py', available: pythonReady || IN_CI },
];

interface Envelope {
  report: { lots: { price: number | null }[] };
  signature: string;
}

describe('the verification samples of docs/reports.md against a live server', () => {
  let t: TestApp;
  let origin: string;
  let reportUrl: string;
  let digest: string;
  let envelope: Envelope;
  let dir: string;

  const run = (command: string, file: string, source: string) =>
    new Promise<{ code: number; out: string }>((resolve) => {
      execFile(command, [sample(file), source, origin], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, timeout: 20_000 }, (error, stdout, stderr) =>
        resolve({ code: typeof error?.code === 'number' ? error.code : 0, out: `${stdout}${stderr}`.trim() }),
      );
    });
  const saved = (name: string, body: unknown) => {
    const file = path.join(dir, name);
    writeFileSync(file, JSON.stringify(body));
    return file;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-report-samples-'));
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    t = await createTestApp('sqlite', { config: testConfig({ PUBLIC_BASE_URL: origin, DATA_DIR: dir }) });
    const vin = validVin('1FTFW1ET5DFC7777');
    await t.repos.lots.upsertBatch([makeLot({ vin, auction: 'copart', lot_id: 41000001, price: 4000, primary_damage: 'FRONT END — «ü»' })]);
    const customer = await createCustomer(t.repos, { rate: 1000 });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    reportUrl = res.json<{ report_url: string }>().report_url;
    await t.app.listen({ port, host: '127.0.0.1' });
    envelope = (await t.app.inject({ url: `${new URL(reportUrl).pathname}.json` })).json<Envelope>();
    digest = (await t.app.services.verification.signed(new URL(reportUrl).pathname.split('/').pop()!))!.digest;
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are the samples docs/reports.md shows, verbatim', () => {
    const doc = readFileSync(fileURLToPath(new URL('../../docs/reports.md', import.meta.url)), 'utf8');
    for (const runner of RUNNERS) expect(doc).toContain(readFileSync(sample(runner.file), 'utf8').trim());
  });

  describe.each(RUNNERS)('$language', ({ command, file, available }) => {
    it.runIf(available)('says genuine for the report link, with the digest the page shows', async () => {
      expect(await run(command, file, `${reportUrl}?lang=pl`)).toEqual({ code: 0, out: `genuine ${digest}` });
    });

    it.runIf(available)('says not genuine once one byte of the signed snapshot is changed, or the report differs from it', async () => {
      const [header, payload, signature] = envelope.signature.split('.') as [string, string, string];
      const bytes = Buffer.from(payload, 'base64url');
      bytes[bytes.indexOf('4000')] = '5'.charCodeAt(0);
      const forged = { ...envelope, signature: `${header}.${bytes.toString('base64url')}.${signature}` };
      const oneByte = await run(command, file, saved('one-byte.json', forged));
      expect(oneByte.code).toBe(1);
      expect(oneByte.out).toMatch(/^not genuine: /);
      const edited = { ...envelope, report: { ...envelope.report, lots: envelope.report.lots.map((lot) => ({ ...lot, price: 5000 })) } };
      expect(await run(command, file, saved('edited.json', edited))).toEqual({ code: 1, out: 'not genuine: the report differs from what was signed' });
      expect(await run(command, file, saved('intact.json', envelope))).toEqual({ code: 0, out: `genuine ${digest}` });
    });
  });
});
