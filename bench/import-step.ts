/**
 * The storage step of a re-import, in one process (`npm run bench:import-step -- [options]`): the
 * CPU a line of `LotsRepository.upsertBatch` when every third lot of a stored set comes again with a
 * new price (bench:import --reimport's changed phase), with each dialect method that the batch calls
 * timed on its own. No reading thread, no process start-up: the figure moves by a few percent
 * between runs on a busy machine, where a whole import's moves by a third (docs/benchmarks.md,
 * "The probe answers the stored lot").
 *
 * It uses only the repositories and the dialect by name, so that it can be copied into a checkout
 * of an older tree (`082863a`) and run there; the methods a tree lacks are left out of the split.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateLots } from '../src/dev/seed/synthetic-lots.ts';
import { migrateToLatest, openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';

const { values } = parseArgs({ options: { lots: { type: 'string', default: '60000' }, 'batch-size': { type: 'string', default: '10000' } } });
const count = Number(values.lots);
const batchSize = Number(values['batch-size']);
if (!(Number.isSafeInteger(count) && count > 0 && Number.isSafeInteger(batchSize) && batchSize > 0)) throw new Error('--lots and --batch-size must be positive whole numbers');
const UNTIL = new Date('2026-01-01T00:00:00.000Z');
const METHODS = ['writeKnownLots', 'probeLots', 'unchangedLots', 'storedLotsByKey', 'upsertLots', 'updateLots', 'appendVersions', 'touchLots', 'sightLots'];

const dir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-import-step-'));
try {
  const db = await openDatabase({ kind: 'sqlite', file: path.join(dir, 'vinhistory.sqlite') });
  try {
    await migrateToLatest(db);
    const repos = createRepositories(db);
    const lots = [...generateLots({ count, seed: 1, until: UNTIL })];
    for (let i = 0; i < count; i += batchSize) await repos.lots.upsertBatch(lots.slice(i, i + batchSize));
    const changed = lots.map((lot, i) => (i % 3 === 0 ? { ...lot, price: (lot.price ?? 1000) + 125 } : lot));
    const cpu = new Map<string, number>();
    const dialect = db.dialect as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    for (const name of METHODS) {
      const method = dialect[name];
      if (typeof method !== 'function') continue;
      dialect[name] = async (...args: unknown[]) => {
        const started = process.cpuUsage();
        try {
          return await method.apply(db.dialect, args);
        } finally {
          const used = process.cpuUsage(started);
          cpu.set(name, (cpu.get(name) ?? 0) + used.user + used.system);
        }
      };
    }
    // Repositories of their own, as a new import process has: the load above left the batch's choice to probe at 'new lots'.
    const again = createRepositories(db);
    const started = process.cpuUsage();
    for (let i = 0; i < count; i += batchSize) await again.lots.upsertBatch(changed.slice(i, i + batchSize));
    const used = process.cpuUsage(started);
    const total = used.user + used.system;
    const split = [...cpu].map(([name, micros]) => `${name} ${(micros / count).toFixed(1)}`).join(', ');
    process.stdout.write(`${(total / count).toFixed(1)} µs of CPU a line (${count} lines, a third changed, batches of ${batchSize}; load average ${os.loadavg()[0]!.toFixed(2)})${split ? `; ${split}` : ''}\n`);
  } finally {
    await db.close();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
