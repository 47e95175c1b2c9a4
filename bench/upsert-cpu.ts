/**
 * The CPU one lot's upsert costs, in process (`npm run bench:upsert-cpu -- [--lots N]`): synthetic
 * lots (seed 7, sale dates before 2026-01-01) stored with LotsRepository.upsertBatch, 1,000 at a
 * time, into a fresh SQLite file with every migration of the tree; the first quarter is not
 * counted (an empty table's first pages), the rest is timed by process.cpuUsage, which the
 * neighbours on a shared machine change much less than the wall clock. Run from two trees
 * alternately, it tells what an index (or anything else on the upsert) costs each lot stored.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateLots } from '../src/dev/seed/synthetic-lots.ts';
import { migrateToLatest, openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';

const { values } = parseArgs({ options: { lots: { type: 'string', default: '80000' } } });
const count = Number(values.lots);
if (!(Number.isInteger(count) && count >= 4_000)) throw new Error('--lots must be a whole number of at least 4000');

const dir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-upsert-cpu-'));
try {
  const db = await openDatabase({ kind: 'sqlite', file: path.join(dir, 'vinhistory.sqlite') });
  try {
    await migrateToLatest(db);
    const repos = createRepositories(db);
    const lots = [...generateLots({ count, seed: 7, until: new Date('2026-01-01T00:00:00.000Z') })];
    const warm = Math.floor(count / 4);
    for (let i = 0; i < warm; i += 1_000) await repos.lots.upsertBatch(lots.slice(i, Math.min(i + 1_000, warm)));
    const started = process.cpuUsage();
    for (let i = warm; i < count; i += 1_000) await repos.lots.upsertBatch(lots.slice(i, i + 1_000));
    const used = process.cpuUsage(started);
    process.stdout.write(`${((used.user + used.system) / (count - warm)).toFixed(1)} µs of CPU a lot (upsertBatch of 1,000; ${count - warm} lots after the first ${warm})\n`);
  } finally {
    await db.close();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
