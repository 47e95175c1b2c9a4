import path from 'node:path';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_POSTGRES_URL } from '../support/env.ts';
import { makeLot, validVin } from '../support/fixtures.ts';
import { makeDataDir, openCliDatabase, runCli, runCliInProcess } from './run-cli.ts';
import { newTestSchemaName } from '../support/databases.ts';

const VIN = validVin('1FTEW1EP1JFA6021');
/** The same VIN with a wrong check digit (position 9 weighs 0 in the sum, so VIN[8] stays the required one). */
const BAD_VIN = `${VIN.slice(0, 8)}${VIN[8] === '0' ? '1' : '0'}${VIN.slice(9)}`;
const lotLine = (lotId: number, extra: Record<string, unknown> = {}) => JSON.stringify({ ...makeLot({ vin: VIN, lot_id: lotId }), ...extra });

describe('vinhistory import', () => {
  const data = makeDataDir();
  afterAll(() => data.remove());
  const file = data.file;

  it('loads the good lines, reports each bad one as file:line: reason on stderr, and exits 1', async () => {
    const lots = file(
      'lots.ndjson',
      [
        lotLine(1, { price: 8800 }),
        '{"vin": oops}',
        JSON.stringify({ vin: BAD_VIN, auction: 'copart', lot_id: 3 }),
        JSON.stringify({ vin: VIN, auction: 'copart' }),
        '',
        lotLine(5, { odometer: 1.5 }),
        lotLine(6, { sale_date: '2022-06-14T10:00:00-04:00' }),
      ].join('\n'),
    );
    const result = await runCliInProcess(['import', lots], { dataDir: data.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(`${lots}: read 6, inserted 2, updated 0, unchanged 0, skipped 4\n`);
    const stderr = result.stderr.trimEnd().split('\n');
    expect(stderr[0]).toMatch(new RegExp(`^${lots}:2: invalid JSON: `));
    expect(stderr.slice(1)).toEqual([
      `${lots}:3: vin: The vin check digit (position 9) is ${BAD_VIN[8]}, but this VIN requires ${VIN[8]}.`,
      `${lots}:4: lot_id: is required`,
      `${lots}:6: odometer: must be a whole number; got 1.5`,
      'error: 4 records skipped; everything else was loaded.',
    ]);

    const { db, repos } = await openCliDatabase(data.dir);
    try {
      const stored = await repos.lots.findByVin(VIN);
      expect(stored.map((lot) => [lot.lot_id, lot.price, lot.sale_date])).toEqual([
        [6, null, '2022-06-14T14:00:00.000Z'],
        [1, 8800, null],
      ]);
    } finally {
      await db.close();
    }
  });

  it('takes several files (gzip and stdin too), prints a summary per file and a total, and exits 0 when all loaded', async () => {
    const plain = file('again.ndjson', `${lotLine(1, { price: 8800 })}\n${lotLine(6, { price: 4150 })}\n`);
    const gzipped = file('more.ndjson.gz', gzipSync(`${lotLine(7)}\n${lotLine(8)}\n`));
    const result = await runCli(['import', '--batch-size', '1', plain, gzipped, '-'], { dataDir: data.dir, input: `${lotLine(9)}\n` });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        `${plain}: read 2, inserted 0, updated 1, unchanged 1, skipped 0`,
        `${gzipped}: read 2, inserted 2, updated 0, unchanged 0, skipped 0`,
        'stdin: read 1, inserted 1, updated 0, unchanged 0, skipped 0',
        'total: read 5, inserted 3, updated 1, unchanged 1, skipped 0',
        '',
      ].join('\n'),
    );
  });

  it('reports a file it cannot read, keeps what a broken file gave before it broke, and can print JSON', async () => {
    const good = file('good.ndjson', `${lotLine(10)}\n`);
    const missing = path.join(data.dir, 'missing.ndjson');
    const lines = Array.from({ length: 400 }, (_, i) => lotLine(1000 + i)).join('\n');
    const gzipped = gzipSync(lines);
    const truncated = file('broken.ndjson.gz', gzipped.subarray(0, Math.floor(gzipped.length * 0.6)));
    const result = await runCliInProcess(['import', '--json', missing, good, truncated], { dataDir: data.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${missing}: cannot read: ENOENT: no such file or directory`);
    expect(result.stderr).toMatch(new RegExp(`${truncated}: reading stopped after line \\d+: unexpected end of file`));
    expect(result.stderr).toContain('error: 2 files refused or not read completely; everything else was loaded.');

    const summary = JSON.parse(result.stdout) as { files: Record<string, unknown>[]; total: Record<string, number> };
    expect(summary.files[0]).toEqual({ file: missing, read: 0, inserted: 0, updated: 0, unchanged: 0, skipped: 0, error: expect.stringContaining('ENOENT') });
    expect(summary.files[1]).toEqual({ file: good, format: 'canonical lots (NDJSON)', read: 1, inserted: 1, updated: 0, unchanged: 0, skipped: 0 });
    const broken = summary.files[2] as { read: number; inserted: number; skipped: number; error: string };
    expect(broken).toMatchObject({ file: truncated, updated: 0, unchanged: 0, error: 'unexpected end of file' });
    expect(broken.read).toBeGreaterThan(0);
    expect(broken.read).toBeLessThan(400);
    // Every complete line before the break is stored; at most the cut line itself is refused.
    expect(broken.inserted + broken.skipped).toBe(broken.read);
    expect(broken.skipped).toBeLessThanOrEqual(1);
    expect(summary.total.inserted).toBe(1 + broken.inserted);

    const { db, repos } = await openCliDatabase(data.dir);
    try {
      expect(await repos.lots.count()).toBe(5 + 1 + broken.inserted);
    } finally {
      await db.close();
    }
  });

  it.runIf(TEST_POSTGRES_URL)('imports into PostgreSQL through DATABASE_URL and exits when done', async () => {
    const schema = newTestSchemaName();
    const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    try {
      await admin.query(`create schema "${schema}"`);
      const url = new URL(TEST_POSTGRES_URL!);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const lots = file('pg.ndjson', `${lotLine(21)}\n${lotLine(22)}\n`);
      const env = { DATABASE_URL: url.toString() };
      const first = await runCli(['import', lots], { dataDir: data.dir, env });
      expect(first.stderr).toBe('');
      expect(first.stdout).toBe(`${lots}: read 2, inserted 2, updated 0, unchanged 0, skipped 0\n`);
      const again = await runCliInProcess(['import', lots], { dataDir: data.dir, env });
      expect(again.stdout).toBe(`${lots}: read 2, inserted 0, updated 0, unchanged 2, skipped 0\n`);
      const { rows } = await admin.query(`select lot_id from "${schema}".lots order by lot_id`);
      expect(rows.map((row) => Number(row.lot_id))).toEqual([21, 22]);
    } finally {
      await admin.end();
    }
  });
});
