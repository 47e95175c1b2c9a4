/**
 * The space the lot history costs (`npm run bench:history-space -- [--lots N] [--rounds N]
 * [--batch-size N] [--data-dir DIR]`): a fresh SQLite database takes N synthetic lots, then
 * re-imports of all of them in rounds, each changing a realistic share of the lots (the final
 * price arriving, the sale date moving, photos replaced, an odometer corrected, a title rewritten);
 * the rest come again unchanged. The pages of each table and its indexes (SQLite's dbstat) over
 * the versions written give the bytes a version costs. See docs/benchmarks.md, "Space".
 *
 * Nothing holds the lots: each round generates them again in order (generateLots is reproducible)
 * and a lot's changes in round r are drawn from a generator seeded by its index and r, so its
 * state in a round is the same whoever asks and whenever. At 10,000,000 lots the earlier version,
 * which kept every lot in an array and mapped it into a new one each round, needed gigabytes.
 */
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import type { Lot } from '../src/domain/lot.ts';
import { mix32, Prng } from '../src/dev/seed/prng.ts';
import { generateLots } from '../src/dev/seed/synthetic-lots.ts';
import { migrateToLatest, openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';
import { withIndexesBuiltAfter } from './support/bench-data.ts';

const { values } = parseArgs({
  options: {
    lots: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '4' },
    'batch-size': { type: 'string', default: '1000' },
    // Where the database goes; it is kept there (without it: a temporary directory, removed at the end).
    'data-dir': { type: 'string' },
  },
});
const count = Number(values.lots);
const rounds = Number(values.rounds);
const batchSize = Number(values['batch-size']);
for (const [name, value] of [['lots', count], ['rounds', rounds], ['batch-size', batchSize]] as const) {
  if (!(Number.isInteger(value) && value > 0)) throw new Error(`--${name} must be a positive whole number`);
}
const log = (message: string) => process.stderr.write(`${message}\n`);
const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
// Fixed, so that a run's lots do not depend on the day it runs.
const UNTIL = new Date('2026-01-01T00:00:00.000Z');
const FIRST_IMPORT = Date.UTC(2026, 10, 1);

/** The share of lots each kind of change touches in one round (a day's pull of a listing). */
const CHANGES: readonly { share: number; change: (lot: Lot, rng: Prng, round: number) => Partial<Lot> }[] = [
  { share: 0.3, change: (lot, rng) => ({ price: (lot.price ?? 1000) + 100 * rng.int(1, 30) }) },
  { share: 0.1, change: (lot) => ({ sale_date: new Date(Date.parse(lot.sale_date ?? '2026-01-01T00:00:00.000Z') + 7 * 86_400_000).toISOString() }) },
  { share: 0.15, change: (lot, _rng, round) => ({ images: [...lot.images.slice(1), `https://cs.copart.com/v1/AUTH_svc.pdoc00001/r${round}/${lot.lot_id}.JPG`] }) },
  { share: 0.02, change: (lot) => ({ odometer: (lot.odometer ?? 50_000) + 1000 }) },
  { share: 0.02, change: () => ({ document: 'CLEAN TITLE' }) },
];

/** Round `round`'s changes to one lot: drawn from its index and the round alone. */
function changedInRound(lot: Lot, index: number, round: number): Lot {
  const rng = new Prng(mix32(index) ^ Math.imul(round, 0x9e3779b9));
  let next = lot;
  for (const { share, change } of CHANGES) if (rng.chance(share)) next = { ...next, ...change(next, rng, round) };
  return next;
}

/** Every lot as round `round` imports it (round 0: the first import), in batches. */
function* batchesOfRound(round: number): Generator<Lot[], void, undefined> {
  let batch: Lot[] = [];
  let index = 0;
  for (const generated of generateLots({ count, seed: 1, until: UNTIL })) {
    let lot = generated;
    for (let r = 1; r <= round; r++) lot = changedInRound(lot, index, r);
    index++;
    batch.push(lot);
    if (batch.length === batchSize) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

async function importRound(repos: ReturnType<typeof createRepositories>, round: number): Promise<number> {
  const started = performance.now();
  const now = new Date(FIRST_IMPORT + round * 86_400_000);
  const source = round === 0 ? 'bench-first.csv' : `bench-round-${round}.csv`;
  let done = 0;
  let reported = 0;
  for (const batch of batchesOfRound(round)) {
    await repos.lots.upsertBatch(batch, { now, source });
    done += batch.length;
    // A 10M round takes most of an hour on a shared machine: say how far it is.
    if (done - reported >= 500_000) {
      reported = done;
      log(`round ${round}: ${int.format(done)} lots in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  log(`round ${round}: ${int.format(done)} lots in ${seconds.toFixed(0)} s`);
  return seconds;
}

const dataDir = values['data-dir'] === undefined ? await mkdtemp(path.join(os.tmpdir(), 'vinhistory-history-space-')) : path.resolve(values['data-dir']);
if (values['data-dir'] !== undefined) {
  await mkdir(dataDir, { recursive: true });
  if ((await readdir(dataDir)).length > 0) throw new Error(`${dataDir} is not empty: give an empty directory`);
}
const file = path.join(dataDir, 'vinhistory.sqlite');
const db = await openDatabase({ kind: 'sqlite', file });
const runStarted = performance.now();
try {
  await migrateToLatest(db);
  const repos = createRepositories(db);
  // As the seed command and bench:market load: WAL checkpoints every 64 MiB, a 1 GiB page cache on
  // this connection, and the lots' non-unique indexes built after the first import. Only the
  // lots table's indexes are deferred; lot_versions keeps its index, the rounds write it as an
  // import would.
  await repos.lots.tuneForBulkLoad();
  await sql`pragma cache_size = -1048576`.execute(db.kysely);
  const roundSeconds: number[] = [];
  const firstStarted = performance.now();
  await withIndexesBuiltAfter(db, async () => roundSeconds.push(await importRound(repos, 0)), log);
  const firstSeconds = (performance.now() - firstStarted) / 1000;
  for (let round = 1; round <= rounds; round++) roundSeconds.push(await importRound(repos, round));
  await sql`pragma wal_checkpoint(TRUNCATE)`.execute(db.kysely);

  const measureStarted = performance.now();
  // One row a B-tree (aggregate), summed by the table it belongs to: a table and all its indexes.
  const { rows } = await sql<{ tbl: string; bytes: number }>`select m.tbl_name as tbl, sum(s.pgsize) as bytes from dbstat as s join sqlite_master as m on m.name = s.name where s.aggregate = 1 group by m.tbl_name`.execute(db.kysely);
  const bytes = Object.fromEntries(rows.map((row) => [row.tbl, Number(row.bytes)]));
  const versions = Number((await db.kysely.selectFrom('lot_versions').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const stored = await repos.lots.count();
  if (stored !== count) throw new Error(`imported ${count} lots but the database holds ${stored}`);
  const measureSeconds = (performance.now() - measureStarted) / 1000;
  const fileBytes = (await stat(file)).size;
  const versionBytes = bytes.lot_versions ?? 0;
  const lotBytes = bytes.lots ?? 0;
  const sightingBytes = bytes.lot_sightings ?? 0;
  const perVersion = versionBytes / versions;
  const perLotRound = versions / count / rounds;
  const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;
  const gib = (b: number) => `${(b / 1024 ** 3).toFixed(2)} GiB`;
  const wall = (performance.now() - runStarted) / 1000;
  console.log(`${int.format(count)} lots, ${rounds} re-imports of all of them (batches of ${int.format(batchSize)}): ${int.format(versions)} versions (${(perLotRound * 100).toFixed(1)}% of the lots changed a round)`);
  console.log(`lots table and its indexes: ${mib(lotBytes)} (${int.format(lotBytes / count)} bytes a lot)`);
  console.log(`lot_versions and its index: ${mib(versionBytes)} (${int.format(perVersion)} bytes a version, ${int.format(versionBytes / count)} bytes a lot after ${rounds} rounds)`);
  console.log(`lot_sightings: ${mib(sightingBytes)} (${int.format(sightingBytes / count)} bytes a lot)`);
  console.log(`database file: ${gib(fileBytes)} (${int.format(fileBytes / count)} bytes a lot)`);
  console.log(`wall time: ${wall.toFixed(0)} s (first import ${firstSeconds.toFixed(0)} s with its index builds; rounds ${roundSeconds.slice(1).map((s) => s.toFixed(0)).join(', ')} s; measuring ${measureSeconds.toFixed(0)} s); peak RSS ${mib(process.resourceUsage().maxRSS * 1024)}`);
  for (const perLot of [1, 3, 10]) console.log(`10,000,000 lots with ${perLot} later version(s) each: ${gib(perVersion * perLot * 10_000_000)} of versions beside ${gib((lotBytes / count) * 10_000_000)} of lots`);
} finally {
  await db.close();
  if (values['data-dir'] === undefined) await rm(dataDir, { recursive: true, force: true });
}
