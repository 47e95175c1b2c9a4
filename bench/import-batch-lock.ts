/**
 * How long one import batch holds SQLite's write lock, by batch size: a server on the same
 * database waits that long in its searches (docs/cli.md, "Batch size").
 *
 * Usage: npm run bench:import-batch-lock -- [--sizes 250,1000,10000] [--lots 100000] [--batches 9]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateLots } from '../src/dev/seed/synthetic-lots.ts';
import { BULK_LOAD_BATCH_SIZE } from '../src/ingest/import-lots.ts';
import { migrateToLatest, openDatabase } from '../src/storage/database.ts';
import { lotsWrittenHooks } from '../src/container.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: `${BULK_LOAD_BATCH_SIZE},1000,10000` },
    lots: { type: 'string', default: '100000' },
    batches: { type: 'string', default: '9' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const preload = Number(values.lots);
const batches = Number(values.batches);
if (sizes.some((n) => !Number.isInteger(n) || n < 1) || !(preload >= 0) || !(batches >= 1)) {
  console.error('usage: npm run bench:import-batch-lock -- [--sizes 250,1000,10000] [--lots 100000] [--batches 9]');
  process.exit(2);
}

console.log(`| --batch-size | lock held, median ms | lock held, slowest ms | lots/s |`);
console.log(`|---:|---:|---:|---:|`);
for (const size of sizes) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vinhistory-batch-lock-'));
  const db = await openDatabase({ kind: 'sqlite', file: path.join(dir, 'db.sqlite') });
  try {
    await migrateToLatest(db);
    // The lots repository as the server wires it: the watched lots' events take part in each batch.
    const { lots } = createRepositories(db, { lotsWritten: lotsWrittenHooks({ photoArchive: false }) });
    await lots.tuneForBulkLoad();
    // The table already holds lots, as a live database does; the first measured batch comes after.
    const all = [...generateLots({ count: preload + size * (batches + 1), seed: 7 })];
    for (let i = 0; i < preload; i += 10_000) await lots.upsertBatch(all.slice(i, Math.min(preload, i + 10_000)));
    await lots.upsertBatch(all.slice(preload, preload + size));
    const times: number[] = [];
    for (let b = 1; b <= batches; b++) {
      const start = preload + b * size;
      const started = performance.now();
      await lots.upsertBatch(all.slice(start, start + size));
      times.push(performance.now() - started);
    }
    times.sort((a, c) => a - c);
    const total = times.reduce((sum, t) => sum + t, 0);
    const median = times[Math.floor(times.length / 2)]!;
    console.log(`| ${size} | ${median.toFixed(1)} | ${times.at(-1)!.toFixed(1)} | ${Math.round((size * batches) / (total / 1000)).toLocaleString('en-US')} |`);
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
