import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { migrateToLatest, openDatabase } from '../../src/storage/database.ts';
import { createRepositories } from '../../src/storage/repositories/index.ts';
import { createUnboundedCustomer, loadSyntheticLots, withIndexesBuiltAfter } from './bench-data.ts';

export interface SearchDataSettings {
  lots: number;
  seed: number;
  /** Keep the database here and reuse it when it already holds `lots` lots; null: the env's DATA_DIR, loaded afresh. */
  dataDir: string | null;
}

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** The lots (loaded now, or found from an earlier run with --data-dir) and a new customer whose limits cannot bind. */
export async function prepareSearchDatabase(settings: SearchDataSettings, env: Record<string, string>, log: (message: string) => void) {
  const config = loadConfig(env);
  const db = await openDatabase(config.database);
  try {
    await migrateToLatest(db);
    const repos = createRepositories(db);
    const stored = await repos.lots.count();
    let vins: string[];
    let seconds: number | null = null;
    if (settings.dataDir !== null && stored === settings.lots) {
      log(`reusing the ${int.format(stored)} lots in ${settings.dataDir}`);
      vins = await sampleVins(db);
      if (config.database.kind === 'sqlite') log(`read the database file into the page cache in ${readThrough(config.database.file).toFixed(1)} s`);
    } else {
      if (stored > 0) throw new Error(`${settings.dataDir} holds ${int.format(stored)} lots, not ${int.format(settings.lots)}: give an empty directory`);
      log(`loading ${int.format(settings.lots)} synthetic lots (seed ${settings.seed}) into ${config.database.kind === 'sqlite' ? config.database.file : 'the database'}`);
      const started = performance.now();
      // The loading connection only: a page cache of 1 GiB rather than 64 MiB for the index pages a load rewrites.
      if (db.dialect.name === 'sqlite') await sql`pragma cache_size = -1048576`.execute(db.kysely);
      ({ vins } = await withIndexesBuiltAfter(db, () => loadSyntheticLots(repos, { count: settings.lots, seed: settings.seed, tuneForBulkLoad: true, progress: log }), log));
      seconds = (performance.now() - started) / 1000;
      log(`loaded ${int.format(settings.lots)} lots of ${int.format(vins.length)} VINs in ${seconds.toFixed(1)} s (${int.format(settings.lots / seconds)} lots/s, generation and index builds included)`);
    }
    const { token } = await createUnboundedCustomer(repos, `-${Date.now().toString(36)}`);
    if (db.dialect.name === 'sqlite') await sql`pragma wal_checkpoint(TRUNCATE)`.execute(db.kysely);
    const file = config.database.kind === 'sqlite' ? config.database.file : null;
    const bytes = file === null ? null : statSync(file).size;
    return { vins, token, loadSeconds: seconds, databaseBytes: bytes };
  } finally {
    await db.close();
    // The load leaves gigabytes for the kernel to write back; searching while it does measures the
    // disk catching up (at 1,000,000 lots on a slow disk it doubled the p99), not the server.
    execFileSync('sync');
  }
}

/**
 * Reads a file once from end to end, so that its pages are in the kernel's page cache: a database
 * left by an earlier run may have been pushed out of it since (on this machine, 1M lots at 0.88
 * of a core and a p99 of 37 ms until read again, then 1.01 and 5 ms). The server's own pages stay
 * cached while it runs; what this measures is the server, not the disk after a cold start.
 */
function readThrough(file: string): number {
  const started = performance.now();
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(4 * 1024 * 1024);
    while (readSync(fd, buffer, 0, buffer.length, null) > 0);
  } finally {
    closeSync(fd);
  }
  return (performance.now() - started) / 1000;
}

/**
 * Up to 200,000 VINs spread over the whole table, for a database loaded by an earlier run: each
 * vehicle as likely as another, as a fresh load's list has them. A vehicle is taken when its first
 * lot's rowid falls on the stride; taking it when any of its lots did (as before) made a vehicle
 * with four lots four times as likely as one with one, and the answers about a fifth larger than
 * a fresh load's (docs/benchmarks.md, the search's "Method").
 */
async function sampleVins(db: Awaited<ReturnType<typeof openDatabase>>): Promise<string[]> {
  const { rows } = await sql<{ vin: string }>`select vin from lots as l where rowid % (1 + (select max(rowid) from lots) / 200000) = 0 and rowid = (select min(rowid) from lots where vin = l.vin)`.execute(db.kysely);
  return rows.map((row) => row.vin);
}

