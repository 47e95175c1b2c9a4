/**
 * The space the lot history costs (`npm run bench:history-space -- [--lots N] [--rounds N]`): a
 * fresh SQLite database takes N synthetic lots, then re-imports of all of them in rounds, each
 * changing a realistic share of the lots (the final price arriving, the sale date moving, photos
 * replaced, an odometer corrected, a title rewritten); the rest come again unchanged. The pages of
 * lot_versions and its index (SQLite's dbstat) over the versions written give the bytes a version
 * costs, which is then extrapolated to 10,000,000 lots. See docs/benchmarks.md.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import type { Lot } from '../src/domain/lot.ts';
import { Prng } from '../src/dev/seed/prng.ts';
import { generateLots } from '../src/dev/seed/synthetic-lots.ts';
import { migrateToLatest, openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';

const { values } = parseArgs({ options: { lots: { type: 'string', default: '50000' }, rounds: { type: 'string', default: '4' } } });
const count = Number(values.lots);
const rounds = Number(values.rounds);
/** The share of lots each kind of change touches in one round (a day's pull of a listing). */
const CHANGES: readonly { share: number; change: (lot: Lot, rng: Prng, round: number) => Partial<Lot> }[] = [
  { share: 0.3, change: (lot, rng) => ({ price: (lot.price ?? 1000) + 100 * rng.int(1, 30) }) },
  { share: 0.1, change: (lot) => ({ sale_date: new Date(Date.parse(lot.sale_date ?? '2026-01-01T00:00:00.000Z') + 7 * 86_400_000).toISOString() }) },
  { share: 0.15, change: (lot, _rng, round) => ({ images: [...lot.images.slice(1), `https://cs.copart.com/v1/AUTH_svc.pdoc00001/r${round}/${lot.lot_id}.JPG`] }) },
  { share: 0.02, change: (lot) => ({ odometer: (lot.odometer ?? 50_000) + 1000 }) },
  { share: 0.02, change: () => ({ document: 'CLEAN TITLE' }) },
];

const dir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-history-space-'));
const db = await openDatabase({ kind: 'sqlite', file: path.join(dir, 'vinhistory.sqlite') });
try {
  await migrateToLatest(db);
  const repos = createRepositories(db);
  let lots = [...generateLots({ count, seed: 1, until: new Date('2026-01-01T00:00:00.000Z') })];
  const started = Date.UTC(2026, 10, 1);
  for (let start = 0; start < lots.length; start += 1000) await repos.lots.upsertBatch(lots.slice(start, start + 1000), { now: new Date(started), source: 'bench-first.csv' });
  const rng = new Prng(29);
  for (let round = 1; round <= rounds; round++) {
    lots = lots.map((lot) => {
      let next = lot;
      for (const { share, change } of CHANGES) if (rng.chance(share)) next = { ...next, ...change(next, rng, round) };
      return next;
    });
    for (let start = 0; start < lots.length; start += 1000) {
      await repos.lots.upsertBatch(lots.slice(start, start + 1000), { now: new Date(started + round * 86_400_000), source: `bench-round-${round}.csv` });
    }
  }
  const { rows } = await sql<{ name: string; bytes: number }>`select name, sum(pgsize) as bytes from dbstat where name in ('lots', 'lots_vin_idx', 'sqlite_autoindex_lots_1', 'lot_versions', 'lot_versions_lot_idx') group by name`.execute(db.kysely);
  const versions = Number((await db.kysely.selectFrom('lot_versions').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const bytes = Object.fromEntries(rows.map((row) => [row.name, Number(row.bytes)]));
  const versionBytes = (bytes.lot_versions ?? 0) + (bytes.lot_versions_lot_idx ?? 0);
  const lotBytes = (bytes.lots ?? 0) + (bytes.lots_vin_idx ?? 0) + (bytes.sqlite_autoindex_lots_1 ?? 0);
  const perVersion = versionBytes / versions;
  const perLotRound = versions / count / rounds;
  const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;
  const gib = (b: number) => `${(b / 1024 ** 3).toFixed(1)} GiB`;
  console.log(`${count} lots, ${rounds} re-imports of all of them: ${versions} versions (${(perLotRound * 100).toFixed(1)}% of the lots changed a round)`);
  console.log(`lots table and indexes: ${mib(lotBytes)} (${Math.round(lotBytes / count)} bytes a lot)`);
  console.log(`lot_versions and its index: ${mib(versionBytes)} (${Math.round(perVersion)} bytes a version)`);
  for (const perLot of [1, 3, 10]) console.log(`10,000,000 lots with ${perLot} later version(s) each: ${gib(perVersion * perLot * 10_000_000)} of versions beside ${gib((lotBytes / count) * 10_000_000)} of lots`);
} finally {
  await db.close();
  await rm(dir, { recursive: true, force: true });
}
