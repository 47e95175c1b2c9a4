import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDataDir, runCliInProcess } from './run-cli.ts';

const dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove();
});

describe('issue 27, the smaller items', () => {
  it("the README's lot and VIN examples are in the demo data, so that they answer a report, not a 404 that burns a search", () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const demo = readFileSync(new URL('../../demo/lots.ndjson', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { vin: string; auction: string; lot_id: number });
    const lots = [...readme.matchAll(/localhost:3000\/api\/v1\/lots\/([a-z]+)\/(\d+)/g)];
    expect(lots.length).toBeGreaterThan(0);
    for (const [, auction, lotId] of lots) expect(demo.some((lot) => lot.auction === auction && lot.lot_id === Number(lotId)), `${auction}/${lotId}`).toBe(true);
    const vins = [...readme.matchAll(/localhost:3000\/api\/v1\/search\?vin=([A-Z0-9]{17})/g)].map((m) => m[1]);
    expect(vins.length).toBeGreaterThan(0);
    for (const vin of vins) expect(demo.some((lot) => lot.vin === vin), vin).toBe(true);
  });

  it('vinhistory --version prints the package version and exits 0', async () => {
    const data = makeDataDir();
    dirs.push(data);
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const result = await runCliInProcess([flag], { dataDir: data.dir });
      expect(result).toMatchObject({ code: 0, stdout: `${version}\n` });
    }
  });

  it('import of a file that does not exist says so, exits 1, and claims nothing was loaded', async () => {
    const data = makeDataDir();
    dirs.push(data);
    const nope = path.join(data.dir, 'nope.csv');
    const result = await runCliInProcess(['import', '--no-progress', nope], { dataDir: data.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${nope}: cannot read: ENOENT: no such file or directory`);
    expect(result.stderr).toContain('error: 1 file refused or not read completely; nothing was loaded.');
    expect(result.stderr).not.toContain('everything else');
  });
});
