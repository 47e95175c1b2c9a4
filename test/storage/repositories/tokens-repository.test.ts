import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../support/databases.ts';
import { createCustomer } from '../../support/fixtures.ts';
import { randomEmail } from './helpers.ts';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

describe.each(DIALECTS)('TokensRepository (%s)', (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  async function newAccountId(): Promise<string> {
    return (await t.repos.accounts.create(randomEmail())).id;
  }

  test('create returns the secret once and stores only its SHA-256', async () => {
    const accountId = await newAccountId();
    const now = new Date('2026-03-04T05:06:07.089Z');
    const { row, token } = await t.repos.tokens.create(accountId, 'production key', now);
    expect(token).toMatch(/^vh_live_[0-9A-Za-z]{32}$/);
    expect(row).toEqual({
      id: expect.stringMatching(/^tok_[0-9a-z]{16}$/),
      accountId,
      name: 'production key',
      kind: 'live',
      displayPrefix: token.slice(0, 12),
      createdAt: '2026-03-04T05:06:07.089Z',
      lastUsedAt: null,
      revokedAt: null,
      expiresAt: null,
    });
    const stored = await t.db.kysely.selectFrom('api_tokens').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
    expect(stored).toEqual({
      id: row.id,
      account_id: accountId,
      name: 'production key',
      token_hash: sha256(token),
      display_prefix: token.slice(0, 12),
      created_at: '2026-03-04T05:06:07.089Z',
      last_used_at: null,
      revoked_at: null,
      expires_at: null,
      sandbox: 0,
      brand_id: null,
    });
    for (const value of Object.values(stored)) expect(value).not.toBe(token);
  });

  test('authenticate: the token, its account and the plan of the subscription in force', async () => {
    const startedAt = new Date(Date.now() - 60_000);
    const customer = await createCustomer(t.repos, { plan: 'professional', startedAt });
    const principal = await t.repos.tokens.authenticate(customer.token);
    const sub = await t.repos.subscriptions.findActive(customer.accountId);
    expect(principal).toEqual({
      tokenId: customer.tokenId,
      accountId: customer.accountId,
      lastUsedAt: null,
      sandbox: false,
      reportBaseUrl: null,
      subscription: {
        id: sub!.id,
        startedAt: startedAt.toISOString(),
        billing: 'monthly',
        planCode: 'professional',
        planName: 'Professional',
        monthlyQuota: 5000,
        ratePerSecond: 5,
      },
    });
  });

  test('authenticate: a custom plan brings its own quota and rate', async () => {
    const customer = await createCustomer(t.repos, { quota: 7, rate: 3 });
    const principal = await t.repos.tokens.authenticate(customer.token);
    expect(principal?.subscription).toMatchObject({ planCode: customer.planCode, monthlyQuota: 7, ratePerSecond: 3 });
    expect(typeof principal?.subscription?.monthlyQuota).toBe('number');
    expect(typeof principal?.subscription?.ratePerSecond).toBe('number');
  });

  test('authenticate: an unknown, altered, truncated or hash-valued token is null', async () => {
    const customer = await createCustomer(t.repos);
    const last = customer.token.at(-1)!;
    const altered = customer.token.slice(0, -1) + (last === 'a' ? 'b' : 'a');
    expect(await t.repos.tokens.authenticate(altered)).toBeNull();
    expect(await t.repos.tokens.authenticate(customer.token.slice(0, -1))).toBeNull();
    expect(await t.repos.tokens.authenticate(sha256(customer.token))).toBeNull();
    expect(await t.repos.tokens.authenticate('')).toBeNull();
  });

  test('authenticate: a token of an account with no subscription in force has subscription null', async () => {
    const accountId = await newAccountId();
    const { row, token } = await t.repos.tokens.create(accountId, 'no plan');
    expect(await t.repos.tokens.authenticate(token)).toEqual({ tokenId: row.id, accountId, lastUsedAt: null, sandbox: false, reportBaseUrl: null, subscription: null });

    // Only an ended, a cancelled and a future subscription: still none in force.
    const now = new Date('2026-06-15T00:00:00.000Z');
    await t.repos.subscriptions.create({
      accountId, planCode: 'standard', billing: 'monthly',
      startedAt: new Date('2026-01-01T00:00:00.000Z'), endsAt: new Date('2026-06-15T00:00:00.000Z'),
    });
    const cancelled = await t.repos.subscriptions.create({ accountId, planCode: 'vip', billing: 'monthly', startedAt: new Date('2026-02-01T00:00:00.000Z') });
    await t.db.kysely.updateTable('subscriptions').set({ status: 'cancelled' }).where('id', '=', cancelled.id).execute();
    await t.repos.subscriptions.create({ accountId, planCode: 'professional', billing: 'monthly', startedAt: new Date('2026-06-15T00:00:00.001Z') });
    expect((await t.repos.tokens.authenticate(token, now))?.subscription).toBeNull();
    // A millisecond later the future one has started.
    expect((await t.repos.tokens.authenticate(token, new Date('2026-06-15T00:00:00.001Z')))?.subscription?.planCode).toBe('professional');
  });

  test('authenticate: the latest started subscription in force wins, with one row per token', async () => {
    const accountId = await newAccountId();
    const { token } = await t.repos.tokens.create(accountId, 'k');
    await t.repos.subscriptions.create({ accountId, planCode: 'standard', billing: 'monthly', startedAt: new Date('2026-01-01T00:00:00.000Z') });
    const vip = await t.repos.subscriptions.create({ accountId, planCode: 'vip', billing: 'annual', startedAt: new Date('2026-02-01T00:00:00.000Z') });
    const principal = await t.repos.tokens.authenticate(token, new Date('2026-03-01T00:00:00.000Z'));
    expect(principal?.subscription).toMatchObject({ id: vip.id, planCode: 'vip', billing: 'annual', monthlyQuota: 15000, ratePerSecond: 10 });
    expect((await t.repos.tokens.authenticate(token, new Date('2026-01-15T00:00:00.000Z')))?.subscription?.planCode).toBe('standard');
  });

  test('revokeByToken: the token stops authenticating at once; other tokens of the account keep working', async () => {
    const customer = await createCustomer(t.repos);
    const second = await t.repos.tokens.create(customer.accountId, 'second');
    const now = new Date('2026-07-01T00:00:00.000Z');
    expect(await t.repos.tokens.revokeByToken(customer.token, now)).toBe(true);
    expect(await t.repos.tokens.authenticate(customer.token)).toBeNull();
    expect((await t.repos.tokens.authenticate(second.token))?.tokenId).toBe(second.row.id);

    const row = await t.db.kysely.selectFrom('api_tokens').selectAll().where('id', '=', customer.tokenId).executeTakeFirstOrThrow();
    expect(row.revoked_at).toBe('2026-07-01T00:00:00.000Z');
    // Revoking again, or a token that never existed, changes nothing and says so.
    expect(await t.repos.tokens.revokeByToken(customer.token, new Date())).toBe(false);
    expect(await t.repos.tokens.revokeByToken('vh_live_00000000000000000000000000000000')).toBe(false);
    const again = await t.db.kysely.selectFrom('api_tokens').select('revoked_at').where('id', '=', customer.tokenId).executeTakeFirstOrThrow();
    expect(again.revoked_at).toBe('2026-07-01T00:00:00.000Z');
  });

  test('touch records the last use, which authenticate reports', async () => {
    const customer = await createCustomer(t.repos);
    await t.repos.tokens.touch(customer.tokenId, new Date('2026-08-01T10:00:00.000Z'));
    expect((await t.repos.tokens.authenticate(customer.token))?.lastUsedAt).toBe('2026-08-01T10:00:00.000Z');
  });

  test("listForAccount: the account's tokens, newest first, revoked ones included", async () => {
    const accountId = await newAccountId();
    const a = await t.repos.tokens.create(accountId, 'a', new Date('2026-01-01T00:00:00.000Z'));
    const b = await t.repos.tokens.create(accountId, 'b', new Date('2026-01-03T00:00:00.000Z'));
    const c = await t.repos.tokens.create(accountId, 'c', new Date('2026-01-02T00:00:00.000Z'));
    await t.repos.tokens.create(await newAccountId(), 'someone else');
    await t.repos.tokens.revokeByToken(c.token, new Date('2026-01-04T00:00:00.000Z'));
    const listed = await t.repos.tokens.listForAccount(accountId);
    expect(listed.map((row) => row.name)).toEqual(['b', 'c', 'a']);
    expect(listed.map((row) => row.id)).toEqual([b.row.id, c.row.id, a.row.id]);
    expect(listed[1]?.revokedAt).toBe('2026-01-04T00:00:00.000Z');
    expect(await t.repos.tokens.listForAccount(await newAccountId())).toEqual([]);
  });
});
