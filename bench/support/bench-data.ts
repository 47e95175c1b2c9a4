import type { Lot } from '../../src/domain/lot.ts';
import type { Repositories } from '../../src/storage/repositories/index.ts';
import { generateLots } from '../../src/dev/seed/synthetic-lots.ts';

const LOAD_BATCH = 1_000;

/**
 * Loads synthetic lots the way an import does (upsertBatch, one transaction a batch) and returns
 * every VIN loaded, for the benchmark to search.
 */
export async function loadSyntheticLots(repos: Repositories, options: { count: number; seed: number }): Promise<{ vins: string[]; seconds: number }> {
  const vins: string[] = [];
  const started = performance.now();
  let batch: Lot[] = [];
  for (const lot of generateLots({ count: options.count, seed: options.seed, onVehicle: (vin) => vins.push(vin) })) {
    batch.push(lot);
    if (batch.length === LOAD_BATCH) {
      await repos.lots.upsertBatch(batch);
      batch = [];
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
