import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { generateLots } from '../../src/dev/seed/synthetic-lots.ts';
import { BIN, cliEnv, makeDataDir, openCliDatabase, runCli, runCliInProcess } from './run-cli.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
const MAPPING = fileURLToPath(new URL('../../examples/usa-cars.mapping.json', import.meta.url));

/** The formats through the CLI's main, in-process (run-cli.ts); Ctrl-C below needs a process of its own. */
describe('vinhistory import: the feed formats', () => {
  const data = makeDataDir();
  afterAll(() => data.remove());
  const file = data.file;

  it('loads Copart CSV and vendor JSON, recognised by content, and prints what it took each file for with --json', async () => {
    const copart = fixture('copart/salesdata-49.csv');
    const vendor = file('vendor-export.txt', readFileSync(fixture('auctionsapi/vehicles-array.json')));
    const result = await runCliInProcess(['import', '--json', copart, vendor], { dataDir: data.dir });
    expect(result.code).toBe(1); // the vehicle without lots is reported
    expect(result.stderr).toMatch(/vendor-export\.txt:\d+: the vehicle record has no lots\n/);
    const summary = JSON.parse(result.stdout) as { files: { format: string; inserted: number; skipped: number }[] };
    expect(summary.files.map((f) => [f.format, f.inserted, f.skipped])).toEqual([
      ['Copart sales-data CSV (49 columns)', 1, 0],
      ['auctionsapi vehicle records (JSON array)', 3, 1],
    ]);
    const { db, repos } = await openCliDatabase(data.dir);
    try {
      const [mercedes] = await repos.lots.findByVin('4JGBF7BE5AA585531');
      expect(mercedes).toMatchObject({ document: 'Salvage certificate (CA)', odometer_type: 'Actual', location_zip: '94590 7203', engine: '4.6L 8' });
      expect(await repos.lots.findByVin('1HGCV1F3XLA012873')).toHaveLength(2);
    } finally {
      await db.close();
    }
  });

  it('loads the AuctionExport listings through the shipped mapping, writes the skipped rows to --report, and re-imports as unchanged', async () => {
    const listings = fixture('usa-cars/usa-cars-full.csv');
    const report = path.join(data.dir, 'skipped.ndjson');
    const first = await runCliInProcess(['import', '--map', MAPPING, '--report', report, listings], { dataDir: data.dir });
    expect(first.code).toBe(1);
    // 2,499 rows: one VIN of 13 characters, and four lots listed twice.
    expect(first.stdout).toBe(`${listings}: read 2499, inserted 2494, updated 0, unchanged 4, skipped 1\n`);
    expect(first.stderr).toBe(`${listings}:34: vin: The vin must be exactly 17 characters; got 13.\nerror: 1 record skipped; everything else was loaded.\n`);
    expect(readFileSync(report, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line))).toEqual([
      {
        file: listings,
        line: 34,
        reason: 'vin: The vin must be exactly 17 characters; got 13.',
        record: '32,29800,chevrolet,camaro,1973,clean vehicle,46226,red,  1q87t3n166389,167763370,pennsylvania, usa,22 hours left',
      },
    ]);
    const again = await runCliInProcess(['import', '--map', MAPPING, '--report', report, listings], { dataDir: data.dir });
    expect(again.stdout).toBe(`${listings}: read 2499, inserted 0, updated 0, unchanged 2498, skipped 1\n`);
  });

  it('updates exactly the one lot whose one field changed', async () => {
    const lines = readFileSync(fixture('usa-cars/usa-cars-subset.csv'), 'utf8').split('\r\n');
    const before = file('listings-monday.csv', lines.join('\r\n'));
    await runCliInProcess(['import', '--map', MAPPING, before], { dataDir: data.dir });
    // Line 3 (lot 166951262): mileage 190552 -> 190600.
    lines[2] = lines[2]!.replace(',190552,', ',190600,');
    const after = file('listings-tuesday.csv', lines.join('\r\n'));
    const result = await runCliInProcess(['import', '--map', MAPPING, after], { dataDir: data.dir });
    expect(result.stdout).toBe(`${after}: read 42, inserted 0, updated 1, unchanged 40, skipped 1\n`);
    const { db, repos } = await openCliDatabase(data.dir);
    try {
      const [lot] = await repos.lots.findByVin('2FMDK3GC4BBB02217');
      expect(lot).toMatchObject({ lot_id: 166951262, odometer: 190600, price: 2899 });
    } finally {
      await db.close();
    }
  });

  it('refuses an HTML page saved as the CSV, and a CSV it has no mapping for, loading nothing from them', async () => {
    const botWall = fixture('copart/bot-wall.csv');
    const listings = fixture('usa-cars/usa-cars-subset.csv');
    const result = await runCliInProcess(['import', botWall, listings], { dataDir: data.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(
      [`${botWall}: refused`, `${listings}: refused`, 'total: read 0, inserted 0, updated 0, unchanged 0, skipped 0', ''].join('\n'),
    );
    expect(result.stderr).toContain(`${botWall}: refused: looks like an HTML page (a bot wall or a login page?), not CSV or JSON\n`);
    expect(result.stderr).toContain(`${listings}: refused: a CSV with columns "id", "price", "brand"`);
    expect(result.stderr).toContain('error: 2 files refused or not read completely; nothing was loaded.');
  });

  it('keeps the rows of a truncated Copart file before the cut, and exits 1 naming the line', async () => {
    const text = readFileSync(fixture('copart/salesdata-59-quirks.csv'), 'utf8');
    const cut = file('copart-cut.csv', text.slice(0, text.indexOf('"PROGRESSIVE', text.indexOf('\n"5"')) + 5));
    for (const worker of [[], ['--no-worker']]) {
      const result = await runCliInProcess(['import', ...worker, '--batch-size', '2', cut], { dataDir: data.dir });
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/copart-cut\.csv: read 4, inserted \d, updated \d, unchanged \d, skipped 0 \(stopped early: the rest of the file was not read\)\n/);
      expect(result.stderr).toContain(
        'copart-cut.csv: reading stopped after line 5: the file ends inside a quoted field opened on line 6: it is truncated (or a stray quote on that line swallowed the rest of the file)',
      );
    }
  });

  it('loads the good rows around a bad one in the middle of a file', async () => {
    const text = readFileSync(fixture('copart/salesdata-59-quirks.csv'), 'utf8').split('\n');
    text.splice(3, 0, '"not","a","row"');
    const mixed = file('copart-mixed.csv', text.join('\n'));
    const result = await runCliInProcess(['import', '--json', mixed], { dataDir: data.dir });
    const summary = JSON.parse(result.stdout) as { total: Record<string, number> };
    expect(summary.total).toMatchObject({ read: 7, skipped: 3 });
    expect(result.stderr.split('\n').filter((line) => line.startsWith(mixed))).toEqual([
      `${mixed}:4: has 3 columns; the header has 59`,
      `${mixed}:7: vin: The vin check digit (position 9) is X, but this VIN requires 1.`,
      expect.stringMatching(new RegExp(`^${mixed}:8: sale_date: Time Zone "XYZ" is not one this importer knows`)),
    ]);
  });

  it('fills empty vehicle fields from the VIN with --enrich, keeping its database under DATA_DIR', async () => {
    const enrichData = makeDataDir();
    try {
      const lines = readFileSync(fixture('usa-cars/usa-cars-subset.csv'), 'utf8').split('\r\n').slice(0, 3);
      const listings = file('two-listings.csv', lines.join('\r\n'));
      const result = await runCliInProcess(['import', '--enrich', '--map', MAPPING, listings], { dataDir: enrichData.dir });
      expect(result.code).toBe(0);
      expect(result.stderr).toContain(`unpacking the NHTSA vPIC database into ${enrichData.dir}/vpic`);
      const { db, repos } = await openCliDatabase(enrichData.dir);
      try {
        const [toyota] = await repos.lots.findByVin('JTEZU11F88K007763');
        // The listing's own (odd) model stays; what it lacks comes from the VIN.
        expect(toyota).toMatchObject({ brand: 'TOYOTA', model: 'CRUISER', year: 2008, body: 'SUV', engine: '4.0L 6', cylinders: 6, fuel: 'Gasoline' });
      } finally {
        await db.close();
      }
    } finally {
      enrichData.remove();
    }
  }, 60_000);
});

describe('vinhistory import: Ctrl-C', () => {
  const data = makeDataDir();
  afterAll(() => data.remove());

  it('stores the batches read so far, exits 130, and a re-run finishes the job', async () => {
    // Enough that the import is far from done when the first batch shows (600 more lots were stored
    // by the time SIGINT landed on a loaded machine), and no more: each lot is written, imported,
    // interrupted and imported again.
    const total = 15_000;
    const lotsFile = path.join(data.dir, 'many.ndjson');
    writeFileSync(lotsFile, [...generateLots({ count: total, seed: 5, until: new Date('2026-01-01T00:00:00Z') })].map((lot) => JSON.stringify(lot)).join('\n') + '\n');

    const child = spawn(process.execPath, [BIN, 'import', '--batch-size', '200', lotsFile], { env: cliEnv(data.dir), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

    // Interrupt once some batches are stored (the database is in WAL mode: readable meanwhile).
    const database = path.join(data.dir, 'vinhistory.sqlite');
    let storedWhenStopped = 0;
    for (let i = 0; i < 600 && storedWhenStopped === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      try {
        const reader = new BetterSqlite3(database, { readonly: true, fileMustExist: true });
        try {
          storedWhenStopped = (reader.prepare('select count(*) as n from lots').get() as { n: number }).n;
        } finally {
          reader.close();
        }
      } catch {
        // Not created yet.
      }
    }
    expect(storedWhenStopped).toBeGreaterThan(0);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const stored = /read (\d+), inserted (\d+)/.exec(stdout);
    expect(stdout).toMatch(/many\.ndjson: read \d+, inserted \d+, updated 0, unchanged 0, skipped 0 \(interrupted\)\n/);
    expect(stderr).toMatch(/error: interrupted: \d+ lots stored; run the same command again to finish/);
    const inserted = Number(stored![2]);
    expect(inserted).toBeGreaterThanOrEqual(storedWhenStopped);
    expect(inserted).toBeLessThan(total);

    const { db, repos } = await openCliDatabase(data.dir);
    try {
      expect(await repos.lots.count()).toBe(inserted);
    } finally {
      await db.close();
    }
    const rerun = await runCli(['import', lotsFile], { dataDir: data.dir });
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toBe(`${lotsFile}: read ${total}, inserted ${total - inserted}, updated 0, unchanged ${inserted}, skipped 0\n`);
  }, 60_000);
});
