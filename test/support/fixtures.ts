import type { TokenPrincipal } from '../../src/domain/principal.ts';
import type { Lot } from '../../src/domain/lot.ts';
import { LOT_FIELDS } from '../../src/domain/lot.ts';
import { computeCheckDigit } from '../../src/domain/vin.ts';
import type { Repositories } from '../../src/storage/repositories/index.ts';

/** A North American VIN with a correct check digit, built from a 16-character stem. */
export function validVin(stem = '1HGCM82633A00435'): string {
  const draft = `${stem.slice(0, 8)}0${stem.slice(8, 16)}`;
  return `${draft.slice(0, 8)}${computeCheckDigit(draft)}${draft.slice(9)}`;
}

// Consecutive from a random start: two lots of one process never share an id, as independent random
// ids could (the second would replace the first on import and the test would fail by chance).
let nextLotId = 10_000_000 + Math.floor(Math.random() * 80_000_000);

/** A lot with every field null except the identity, overridden as the test needs. */
export function makeLot(overrides: Partial<Lot> & Pick<Lot, 'vin'>): Lot {
  const lot = {} as Record<string, unknown>;
  for (const field of LOT_FIELDS) lot[field] = null;
  return {
    ...(lot as Lot),
    auction: 'copart',
    lot_id: nextLotId++,
    images: [],
    ...overrides,
  };
}

export interface Customer {
  accountId: string;
  token: string;
  tokenId: string;
  planCode: string;
}

let planCounter = 0;

/**
 * The principal a search by this token relies on at `now`, read as the search path reads it: what
 * a direct call of searchCommit.commit must name (the commit re-checks it).
 */
export async function principalAt(repos: Repositories, tokenId: string, now: Date): Promise<TokenPrincipal> {
  const principal = await repos.tokens.reload(tokenId, now);
  if (principal === null) throw new Error(`token ${tokenId} is not live at ${now.toISOString()}`);
  return principal;
}

/**
 * An account with an active subscription and a token. With quota/rate it gets a custom plan of its
 * own; otherwise the given public plan.
 */
export async function createCustomer(
  repos: Repositories,
  options: { plan?: string; quota?: number; rate?: number; startedAt?: Date; email?: string } = {},
): Promise<Customer> {
  let planCode = options.plan ?? 'standard';
  if (options.quota !== undefined || options.rate !== undefined) {
    planCode = `custom-${process.pid}-${++planCounter}-${Math.random().toString(36).slice(2, 8)}`;
    await repos.plans.create({
      code: planCode,
      name: `Custom ${planCode}`,
      monthlyQuota: options.quota ?? 1_000_000,
      ratePerSecond: options.rate ?? 1_000_000,
      monthlyPriceCents: 0,
    });
  }
  const email = options.email ?? `customer-${Math.random().toString(36).slice(2)}@example.com`;
  const account = await repos.accounts.create(email);
  await repos.subscriptions.create({
    accountId: account.id,
    planCode,
    billing: 'monthly',
    startedAt: options.startedAt ?? new Date(Date.now() - 1000),
  });
  const { row, token } = await repos.tokens.create(account.id, 'test');
  return { accountId: account.id, token, tokenId: row.id, planCode };
}
