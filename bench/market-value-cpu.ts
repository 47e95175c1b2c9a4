/**
 * The CPU one market value by VIN costs, in process (`npm run bench:market-value-cpu -- --data-dir
 * DIR [--calls N]`): MarketService.valueFor over the SQLite database a `bench:market --data-dir`
 * run left, for VINs drawn with a fixed seed, timed by process.cpuUsage (user + system of this
 * process, which the neighbours on a shared machine do not change) and by the wall clock. Run
 * from two trees alternately, it compares their market values on the same database and VINs.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { MarketService } from '../src/market/market-service.ts';
import { openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    calls: { type: 'string', default: '300' },
    warmup: { type: 'string', default: '50' },
    // The measured calls again, each pass reported: a tree that keeps comparables in memory answers a pass after the first from it.
    passes: { type: 'string', default: '1' },
  },
});
if (values['data-dir'] === undefined) throw new Error('--data-dir DIR: the directory of a bench:market --data-dir run');
const calls = Number(values.calls);
const warmup = Number(values.warmup);
const passes = Number(values.passes);

const db = await openDatabase({ kind: 'sqlite', file: path.join(values['data-dir'], 'vinhistory.sqlite') });
try {
  const repos = createRepositories(db);
  const service = new MarketService({ repos });
  // Every 97th VIN by rowid: the same VINs in every tree and run.
  const { rows } = await sql<{ vin: string }>`select vin from lots where rowid % 97 = 0 order by rowid limit ${calls + warmup}`.execute(db.kysely);
  const vins = rows.map((row) => row.vin);
  const asOf = new Date();
  for (const vin of vins.slice(0, warmup)) await service.valueFor({ kind: 'vin', vin }, { primaryDamage: null, months: 12, asOf });
  for (let pass = 1; pass <= passes; pass++) {
    let comparables = 0;
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (const vin of vins.slice(warmup)) comparables += (await service.valueFor({ kind: 'vin', vin }, { primaryDamage: null, months: 12, asOf }))?.comparables.count ?? 0;
    const wall = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const measured = vins.length - warmup;
    process.stdout.write(
      `${passes > 1 ? `pass ${pass}: ` : ''}${measured} market values by VIN: CPU ${((cpu.user + cpu.system) / measured / 1000).toFixed(2)} ms each (user ${(cpu.user / measured / 1000).toFixed(2)}), ` +
        `wall ${(wall / measured).toFixed(2)} ms each, ${(comparables / measured).toFixed(0)} comparables each on average\n`,
    );
  }
} finally {
  await db.close();
}
