import { sql } from 'kysely';
import type { Lot } from '../../src/domain/lot.ts';
import type { Db } from '../../src/storage/database.ts';
import type { Repositories } from '../../src/storage/repositories/index.ts';
import { generateLots } from '../../src/dev/seed/synthetic-lots.ts';

const LOAD_BATCH = 1_000;

/**
 * Loads synthetic lots the way an import does (upsertBatch, one transaction a batch) and returns
 * every VIN loaded, for the benchmark to search.
 */
export async function loadSyntheticLots(
  repos: Repositories,
  options: { count: number; seed: number; tuneForBulkLoad?: boolean; progress?: (message: string) => void },
): Promise<{ vins: string[]; seconds: number }> {
  const vins: string[] = [];
  // What the seed command does for a bulk load: on SQLite, checkpoint the WAL every 64 MiB rather
  // than every 4 MiB. Asked for: it stays set on the connection, which some benchmarks go on to measure.
  if (options.tuneForBulkLoad) await repos.lots.tuneForBulkLoad();
  const started = performance.now();
  let batch: Lot[] = [];
  let loaded = 0;
  for (const lot of generateLots({ count: options.count, seed: options.seed, onVehicle: (vin) => vins.push(vin) })) {
    batch.push(lot);
    if (batch.length === LOAD_BATCH) {
      await repos.lots.upsertBatch(batch);
      loaded += batch.length;
      batch = [];
      // A 10M load takes most of an hour on a shared machine: say how far it is.
      if (options.progress && loaded % 250_000 === 0) options.progress(`${loaded} lots in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
  }
  if (batch.length > 0) await repos.lots.upsertBatch(batch);
  const seconds = (performance.now() - started) / 1000;
  const stored = await repos.lots.count();
  if (stored !== options.count) throw new Error(`loaded ${options.count} lots but the database holds ${stored}`);
  return { vins, seconds };
}

export interface BenchCustomer {
  accountId: string;
  tokenId: string;
  token: string;
}

/** An account on a custom plan whose limits never bind (10^9 a month, 10^6 a second), with a token. */
export async function createUnboundedCustomer(repos: Repositories, tag = ''): Promise<BenchCustomer> {
  const plan = await repos.plans.create({
    code: `bench-unbounded${tag}`,
    name: 'Benchmark (limits that never bind)',
    monthlyQuota: 1_000_000_000,
    ratePerSecond: 1_000_000,
    monthlyPriceCents: 0,
  });
  const account = await repos.accounts.create(`bench${tag}@vinhistory.invalid`);
  await repos.subscriptions.create({ accountId: account.id, planCode: plan.code, billing: 'monthly', startedAt: new Date(Date.now() - 60_000) });
  const { row, token } = await repos.tokens.create(account.id, 'bench');
  return { accountId: account.id, tokenId: row.id, token };
}

/**
 * Runs a bulk load into an empty lots table with its secondary indexes dropped, then builds them
 * again from their own stored definitions (the same indexes, byte for byte). Each lot lands at a
 * random place in every one of them (lot ids are permuted, sale dates drawn at random), so kept
 * during the load, every batch dirties one page per lot per index: at 10M lots on SQLite that
 * is several kilobytes of WAL per lot, written again at each checkpoint. Built after, each index
 * is one sort. The unique indexes stay: the upsert's ON CONFLICT and the batch's own look-ups
 * use them.
 */
export async function withIndexesBuiltAfter<T>(db: Db, load: () => Promise<T>, log: (message: string) => void): Promise<T> {
  const { rows: indexes } =
    db.dialect.name === 'sqlite'
      ? await sql<{ name: string; definition: string }>`select name, sql as definition from sqlite_master where type = 'index' and tbl_name = 'lots' and sql is not null and sql not like 'create unique%'`.execute(db.kysely)
      : await sql<{ name: string; definition: string }>`select c.relname as name, pg_get_indexdef(i.indexrelid) as definition from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = 'lots'::regclass and not i.indisunique and not i.indisprimary`.execute(db.kysely);
  for (const index of indexes) await sql.raw(`drop index "${index.name}"`).execute(db.kysely);
  const result = await load();
  for (const index of indexes) {
    const started = performance.now();
    if (db.dialect.name === 'sqlite') await sql.raw(index.definition).execute(db.kysely);
    else {
      await db.kysely.transaction().execute(async (tx) => {
        await sql`set local maintenance_work_mem = '512MB'`.execute(tx);
        await sql.raw(index.definition).execute(tx);
      });
    }
    log(`built ${index.name} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  return result;
}
