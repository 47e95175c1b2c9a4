import { afterAll, describe, expect, it } from 'vitest';
import { checkVin } from '../../src/domain/vin.ts';
import { makeDataDir, openCliDatabase, runCli, runCliInProcess } from './run-cli.ts';

describe('vinhistory seed', () => {
  const data = makeDataDir();
  afterAll(() => data.remove());

  it('writes N synthetic lots through the importer, prints VINs to try, and is idempotent', async () => {
    // The real binary once: it writes through the importer and exits on its own; the rest in-process.
    const first = await runCli(['seed', '--lots', '1500', '--seed', '42', '--batch-size', '400'], { dataDir: data.dir });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const [summary, sample] = first.stdout.trimEnd().split('\n');
    expect(summary).toBe('seed 42: read 1500, inserted 1500, updated 0, unchanged 0, skipped 0');
    const vins = sample!.replace('sample VINs: ', '').split(' ');
    expect(vins).toHaveLength(5);
    for (const vin of vins) expect(checkVin(vin)).toEqual({ ok: true, vin });

    const { db, repos } = await openCliDatabase(data.dir);
    try {
      expect(await repos.lots.count()).toBe(1500);
      // Several lots per vehicle, as at real auctions.
      const histories = await Promise.all(vins.map((vin) => repos.lots.findByVin(vin)));
      expect(histories.every((lots) => lots.length >= 1)).toBe(true);
    } finally {
      await db.close();
    }

    const again = await runCliInProcess(['seed', '--lots', '1500', '--seed', '42', '--json'], { dataDir: data.dir });
    expect(JSON.parse(again.stdout)).toEqual({ read: 1500, inserted: 0, updated: 0, unchanged: 1500, skipped: 0, seed: 42, sample_vins: vins });
    // Another seed: other vehicles, other lots.
    const other = await runCliInProcess(['seed', '--lots', '100', '--seed', '43', '--json'], { dataDir: data.dir });
    expect(JSON.parse(other.stdout)).toMatchObject({ inserted: 100 });
  });

  it('refuses a count it cannot make', async () => {
    for (const lots of ['0', '-5', 'many', '10000001']) {
      const result = await runCliInProcess(['seed', '--lots', lots], { dataDir: data.dir });
      expect(result.code, lots).toBe(2);
    }
  });
});
