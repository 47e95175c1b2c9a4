import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerStatements } from '../../src/storage/ledger-statements.ts';
import type { TokenPrincipal } from '../../src/domain/principal.ts';
import { PrincipalRecheck, principalHolds, type SubscriptionInForceRow } from '../../src/storage/principal-recheck.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';
import { createCustomer, principalAt } from '../support/fixtures.ts';

const SUBSCRIPTION = {
  id: 'sub_1',
  startedAt: '2026-03-01T00:00:00.000Z',
  billing: 'monthly',
  planCode: 'standard',
  planName: 'Standard',
  monthlyQuota: 1000,
  ratePerSecond: 2,
} as const;

function principal(subscription: TokenPrincipal['subscription'] = { ...SUBSCRIPTION }, sandbox = false): TokenPrincipal {
  return { tokenId: 'tok_1', accountId: 'acct_1', lastUsedAt: null, sandbox, reportBaseUrl: null, subscription };
}

const inForce = (overrides: Partial<SubscriptionInForceRow> = {}): SubscriptionInForceRow => ({
  id: SUBSCRIPTION.id,
  startedAt: SUBSCRIPTION.startedAt,
  monthlyQuota: SUBSCRIPTION.monthlyQuota,
  ratePerSecond: SUBSCRIPTION.ratePerSecond,
  ...overrides,
});

describe('principalHolds', () => {
  it('holds when the token is live and the same subscription is in force on the same figures', () => {
    expect(principalHolds(principal(), true, inForce())).toBe(true);
  });

  it('never holds for a token that is no longer live, whatever the subscription', () => {
    expect(principalHolds(principal(), false, inForce())).toBe(false);
    expect(principalHolds(principal(null, true), false, undefined)).toBe(false);
  });

  it('does not hold once the subscription relied on is no longer in force', () => {
    expect(principalHolds(principal(), true, undefined)).toBe(false);
  });

  it('does not hold when another subscription is in force (a renewal, a new purchase), even on the same plan', () => {
    expect(principalHolds(principal(), true, inForce({ id: 'sub_2' }))).toBe(false);
    expect(principalHolds(principal(), true, inForce({ startedAt: '2026-03-15T00:00:00.000Z' }))).toBe(false);
  });

  it('does not hold when the plan in force has another quota or rate', () => {
    expect(principalHolds(principal(), true, inForce({ monthlyQuota: 999 }))).toBe(false);
    expect(principalHolds(principal(), true, inForce({ ratePerSecond: 3 }))).toBe(false);
  });

  it('holds for a sandbox token of an account without a plan while none is bought; not once one is (its allowance changes)', () => {
    expect(principalHolds(principal(null, true), true, undefined)).toBe(true);
    expect(principalHolds(principal(null, true), true, inForce())).toBe(false);
  });

  it('compares figures by value, as a driver may hand numbers back as strings', () => {
    const asStrings = inForce({ monthlyQuota: '1000' as unknown as number, ratePerSecond: '2' as unknown as number });
    expect(principalHolds(principal(), true, asStrings)).toBe(true);
    expect(principalHolds(principal(), true, inForce({ monthlyQuota: '1001' as unknown as number }))).toBe(false);
  });
});

/** The probes themselves, against each database: what a search's commit reads about its principal. */
describe.each(DIALECTS)('PrincipalRecheck.holds (%s)', (dialect) => {
  let t: TestDatabase;
  let recheck: PrincipalRecheck;
  beforeAll(async () => {
    t = await createTestDatabase(dialect);
    recheck = new PrincipalRecheck(t.db.kysely);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  const at = (date: Date) => date.toISOString();

  it('holds for a principal just read, and stops holding when its token is revoked', async () => {
    const now = new Date();
    const customer = await createCustomer(t.repos, { quota: 50, rate: 5 });
    const read = await principalAt(t.repos, customer.tokenId, now);
    expect(await recheck.holds(t.db.kysely, read, at(now))).toBe(true);
    await t.repos.tokens.revokeForAccount(customer.accountId, customer.tokenId, now);
    expect(await recheck.holds(t.db.kysely, read, at(now))).toBe(false);
  });

  it('a rotated token holds until its grace ends, and not from that moment', async () => {
    const now = new Date();
    const customer = await createCustomer(t.repos);
    const read = await principalAt(t.repos, customer.tokenId, now);
    const graceEndsAt = new Date(now.getTime() + 60_000);
    expect(await t.repos.tokens.rotateForAccount(customer.accountId, customer.tokenId, graceEndsAt, now)).not.toBeNull();
    expect(await recheck.holds(t.db.kysely, read, at(new Date(graceEndsAt.getTime() - 1)))).toBe(true);
    expect(await recheck.holds(t.db.kysely, read, at(graceEndsAt))).toBe(false);
  });

  it('stops holding when the subscription is cancelled, or its plan changed', async () => {
    const now = new Date();
    const cancelled = await createCustomer(t.repos, { quota: 50, rate: 5 });
    const cancelledRead = await principalAt(t.repos, cancelled.tokenId, now);
    await t.repos.subscriptions.cancelActive(cancelled.accountId, now);
    expect(await recheck.holds(t.db.kysely, cancelledRead, at(new Date(now.getTime() + 1)))).toBe(false);

    const changed = await createCustomer(t.repos, { quota: 50, rate: 5 });
    const changedRead = await principalAt(t.repos, changed.tokenId, now);
    const subscription = (await t.repos.subscriptions.findActive(changed.accountId, now))!;
    await t.repos.subscriptions.changePlan(subscription.id, 'professional');
    expect(await recheck.holds(t.db.kysely, changedRead, at(now))).toBe(false);
    // Read afresh, it holds again.
    expect(await recheck.holds(t.db.kysely, await principalAt(t.repos, changed.tokenId, now), at(now))).toBe(true);
  });

  it('stops holding when a newer subscription comes into force, and when the one relied on ends by its date', async () => {
    const now = new Date();
    const customer = await createCustomer(t.repos, { startedAt: new Date(now.getTime() - 60_000) });
    const read = await principalAt(t.repos, customer.tokenId, now);
    const renewalStarts = new Date(now.getTime() + 60_000);
    await t.repos.subscriptions.create({ accountId: customer.accountId, planCode: 'standard', billing: 'monthly', startedAt: renewalStarts });
    // Scheduled, not yet in force: what the search relied on still holds.
    expect(await recheck.holds(t.db.kysely, read, at(now))).toBe(true);
    expect(await recheck.holds(t.db.kysely, read, at(renewalStarts))).toBe(false);

    const ending = await createCustomer(t.repos);
    const endingRead = await principalAt(t.repos, ending.tokenId, now);
    const endsAt = new Date(now.getTime() + 60_000);
    await t.repos.subscriptions.setEndsAt(endingRead.subscription!.id, endsAt);
    expect(await recheck.holds(t.db.kysely, endingRead, at(new Date(endsAt.getTime() - 1)))).toBe(true);
    expect(await recheck.holds(t.db.kysely, endingRead, at(endsAt))).toBe(false);
  });

  it('holds for a sandbox token without a plan until the account buys one', async () => {
    const now = new Date();
    const account = await t.repos.accounts.create(`sandbox-${Math.random().toString(36).slice(2)}@example.com`);
    const { row } = await t.repos.tokens.create(account.id, 'sandbox', now, 'test');
    const read = await principalAt(t.repos, row.id, now);
    expect(read).toMatchObject({ sandbox: true, subscription: null });
    expect(await recheck.holds(t.db.kysely, read, at(now))).toBe(true);
    await t.repos.subscriptions.create({ accountId: account.id, planCode: 'standard', billing: 'monthly', startedAt: new Date(now.getTime() - 1000) });
    expect(await recheck.holds(t.db.kysely, read, at(now))).toBe(false);
  });

  it('runs inside the transaction it is given, seeing that transaction\'s own uncommitted revocation', async () => {
    const now = new Date();
    const customer = await createCustomer(t.repos);
    const read = await principalAt(t.repos, customer.tokenId, now);
    await t.db.kysely
      .transaction()
      .execute(async (trx) => {
        await trx.updateTable('api_tokens').set({ revoked_at: at(now) }).where('id', '=', customer.tokenId).execute();
        expect(await recheck.holds(trx, read, at(now))).toBe(false);
        throw new Error('roll back');
      })
      .catch((error: Error) => expect(error.message).toBe('roll back'));
    expect(await recheck.holds(t.db.kysely, read, at(now))).toBe(true);
  });
});

/**
 * SQLite (built with STAT4, as better-sqlite3 is) re-prepares a statement every time a parameter
 * it compared with a partial index's condition is bound to a new value: a search's commit paid a
 * parse and plan per search (0.6 M instructions) for `is_default = ?` beside
 * brands_one_default_idx (docs/decisions.md, "A literal where a partial index's condition is
 * compared"). The search path's statements state such
 * conditions as literals.
 */
describe('the search path binds no parameter that a partial index condition is compared with', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('sqlite');
  });
  afterAll(async () => {
    await t?.destroy();
  });

  it('names no column of a partial index condition against a bound parameter', async () => {
    // Both files' indexes: the ledger's tables are in the searches file (searches-file.ts).
    const { rows } = await sql<{ name: string; table: string; sql: string }>`
      select name, tbl_name as "table", sql from main.sqlite_master where type = 'index' and sql like '% where %'
      union all select name, tbl_name as "table", sql from searches.sqlite_master where type = 'index' and sql like '% where %'`.execute(t.db.kysely);
    const conditions = rows.flatMap(({ name, table, sql: text }) =>
      [...text.slice(text.toLowerCase().lastIndexOf(' where ')).matchAll(/"([a-z_]+)"\s*(?:=|!=|<>|<|>|is|in)/gi)].map((m) => ({ index: name, table, column: m[1]! })),
    );
    expect(conditions).toContainEqual({ index: 'brands_one_default_idx', table: 'brands', column: 'is_default' });
    const recheck = new PrincipalRecheck(t.db.kysely);
    const ledger = new LedgerStatements(t.db.kysely);
    const statements = [recheck.liveToken.sql, recheck.subscriptionInForce.sql, ledger.count.sql, ledger.selectUsed.sql, ledger.earlierKey.sql];
    const offending = statements.flatMap((text) =>
      conditions
        .filter(({ table, column }) => {
          // The table by its name, or by each alias the statement gives it.
          const names = [table, ...[...text.matchAll(new RegExp(`"${table}" as "([a-z_]+)"`, 'g'))].map((m) => m[1]!)];
          return names.some((name) => new RegExp(`"${name}"\\."${column}"\\s*(?:=|!=|<>|<=|>=|<|>)\\s*\\?`).test(text));
        })
        .map(({ index, column }) => `${column} (${index}) in: ${text}`),
    );
    expect(offending).toEqual([]);
  });
});
