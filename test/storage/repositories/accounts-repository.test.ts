import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../support/databases.ts';
import { randomEmail, rejectionOf } from './helpers.ts';

const HOUR = 60 * 60 * 1000;

describe.each(DIALECTS)('AccountsRepository and SubscriptionsRepository (%s)', (dialect) => {
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

  describe('accounts', () => {
    test('create stores a normalised email under an acct_ id; lookups by id and by email', async () => {
      const now = new Date('2026-02-03T04:05:06.789Z');
      const account = await t.repos.accounts.create('  Jane.Doe@Example.COM ', now);
      expect(account).toEqual({ id: expect.stringMatching(/^acct_[0-9a-z]{16}$/), email: 'jane.doe@example.com', createdAt: '2026-02-03T04:05:06.789Z', defaultLanguage: null });
      expect(await t.repos.accounts.findById(account.id)).toEqual(account);
      expect(await t.repos.accounts.findByEmail('JANE.DOE@example.com')).toEqual(account);
      expect(await t.repos.accounts.findByEmail(' jane.doe@example.com\n')).toEqual(account);
    });

    test('unknown id or email is undefined', async () => {
      expect(await t.repos.accounts.findById('acct_doesnotexist0000')).toBeUndefined();
      expect(await t.repos.accounts.findByEmail('nobody@example.com')).toBeUndefined();
    });

    test('a duplicate email, in any case, is rejected as a unique violation', async () => {
      const email = randomEmail();
      const first = await t.repos.accounts.create(email);
      const error = await rejectionOf(t.repos.accounts.create(email.toUpperCase()));
      expect(t.db.isUniqueViolation(error)).toBe(true);
      expect(await t.repos.accounts.findByEmail(email)).toEqual(first);
    });

    test('ids are unique', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 20; i++) ids.add(await newAccountId());
      expect(ids.size).toBe(20);
    });
  });

  describe('subscriptions', () => {
    test('create stores an active subscription under a sub_ id', async () => {
      const accountId = await newAccountId();
      const startedAt = new Date('2026-01-31T10:00:00.000Z');
      const now = new Date('2026-01-31T09:00:00.000Z');
      const sub = await t.repos.subscriptions.create({ accountId, planCode: 'professional', billing: 'annual', startedAt }, now);
      expect(sub).toEqual({
        id: expect.stringMatching(/^sub_[0-9a-z]{16}$/),
        accountId: accountId,
        planCode: 'professional',
        billing: 'annual',
        status: 'active',
        startedAt: '2026-01-31T10:00:00.000Z',
        endsAt: null,
        createdAt: '2026-01-31T09:00:00.000Z',
      });
      expect(await t.repos.subscriptions.findActive(accountId, new Date('2026-02-01T00:00:00.000Z'))).toEqual(sub);
    });

    test('an unknown plan or account is refused by the foreign keys', async () => {
      const accountId = await newAccountId();
      const startedAt = new Date();
      await expect(t.repos.subscriptions.create({ accountId, planCode: 'no-such-plan', billing: 'monthly', startedAt })).rejects.toThrow();
      await expect(
        t.repos.subscriptions.create({ accountId: 'acct_missing000000000', planCode: 'standard', billing: 'monthly', startedAt }),
      ).rejects.toThrow();
      expect(await t.repos.subscriptions.findActive(accountId, new Date(startedAt.getTime() + HOUR))).toBeUndefined();
    });

    test('findActive: none for an account without subscriptions', async () => {
      expect(await t.repos.subscriptions.findActive(await newAccountId())).toBeUndefined();
    });

    test('findActive: a subscription is in force from its start (inclusive) to its end (exclusive)', async () => {
      const accountId = await newAccountId();
      const startedAt = new Date('2026-03-01T12:00:00.000Z');
      const endsAt = new Date('2026-04-01T12:00:00.000Z');
      const sub = await t.repos.subscriptions.create({ accountId, planCode: 'standard', billing: 'monthly', startedAt, endsAt });
      expect(sub.endsAt).toBe('2026-04-01T12:00:00.000Z');
      const at = (iso: string) => t.repos.subscriptions.findActive(accountId, new Date(iso));
      expect(await at('2026-03-01T11:59:59.999Z')).toBeUndefined(); // starts in the future
      expect((await at('2026-03-01T12:00:00.000Z'))?.id).toBe(sub.id);
      expect((await at('2026-04-01T11:59:59.999Z'))?.id).toBe(sub.id);
      expect(await at('2026-04-01T12:00:00.000Z')).toBeUndefined(); // ended
      expect(await at('2027-01-01T00:00:00.000Z')).toBeUndefined();
    });

    test('findActive: the latest started subscription in force wins', async () => {
      const accountId = await newAccountId();
      const older = await t.repos.subscriptions.create({ accountId, planCode: 'standard', billing: 'monthly', startedAt: new Date('2026-01-01T00:00:00.000Z') });
      const newer = await t.repos.subscriptions.create({ accountId, planCode: 'vip', billing: 'monthly', startedAt: new Date('2026-02-01T00:00:00.000Z') });
      const future = await t.repos.subscriptions.create({ accountId, planCode: 'professional', billing: 'monthly', startedAt: new Date('2026-03-01T00:00:00.000Z') });
      expect((await t.repos.subscriptions.findActive(accountId, new Date('2026-01-15T00:00:00.000Z')))?.id).toBe(older.id);
      expect((await t.repos.subscriptions.findActive(accountId, new Date('2026-02-15T00:00:00.000Z')))?.id).toBe(newer.id);
      expect((await t.repos.subscriptions.findActive(accountId, new Date('2026-03-15T00:00:00.000Z')))?.id).toBe(future.id);
    });

    test("findActive only sees the account's own subscriptions", async () => {
      const mine = await newAccountId();
      const theirs = await newAccountId();
      await t.repos.subscriptions.create({ accountId: theirs, planCode: 'vip', billing: 'monthly', startedAt: new Date(Date.now() - HOUR) });
      expect(await t.repos.subscriptions.findActive(mine)).toBeUndefined();
      expect((await t.repos.subscriptions.findActive(theirs))?.planCode).toBe('vip');
    });

    test('cancelActive ends the subscriptions in force now and leaves ended ones alone', async () => {
      const accountId = await newAccountId();
      const now = new Date('2026-05-10T08:00:00.000Z');
      const ended = await t.repos.subscriptions.create({
        accountId, planCode: 'standard', billing: 'monthly',
        startedAt: new Date('2026-01-01T00:00:00.000Z'), endsAt: new Date('2026-02-01T00:00:00.000Z'),
      });
      const open = await t.repos.subscriptions.create({ accountId, planCode: 'standard', billing: 'monthly', startedAt: new Date('2026-04-01T00:00:00.000Z') });
      const endingLater = await t.repos.subscriptions.create({
        accountId, planCode: 'vip', billing: 'annual',
        startedAt: new Date('2026-05-01T00:00:00.000Z'), endsAt: new Date('2027-05-01T00:00:00.000Z'),
      });
      const other = await newAccountId();
      const othersSub = await t.repos.subscriptions.create({ accountId: other, planCode: 'standard', billing: 'monthly', startedAt: new Date('2026-04-01T00:00:00.000Z') });

      expect(await t.repos.subscriptions.cancelActive(accountId, now)).toBe(2);
      expect(await t.repos.subscriptions.findActive(accountId, now)).toBeUndefined();
      expect(await t.repos.subscriptions.findActive(accountId, new Date('2026-06-01T00:00:00.000Z'))).toBeUndefined();

      expect(await t.repos.subscriptions.findById(ended.id)).toEqual(ended);
      for (const id of [open.id, endingLater.id]) {
        expect(await t.repos.subscriptions.findById(id)).toMatchObject({ status: 'cancelled', endsAt: '2026-05-10T08:00:00.000Z' });
      }
      // Another account's subscription is untouched; a second cancel finds nothing.
      expect(await t.repos.subscriptions.findActive(other, now)).toEqual(othersSub);
      expect(await t.repos.subscriptions.cancelActive(accountId, now)).toBe(0);
    });

    test('cancelActive also ends a subscription scheduled to start later, so nothing revives after a cancel', async () => {
      const accountId = await newAccountId();
      const now = new Date('2026-05-10T08:00:00.000Z');
      await t.repos.subscriptions.create({ accountId, planCode: 'standard', billing: 'monthly', startedAt: new Date('2026-04-01T00:00:00.000Z') });
      await t.repos.subscriptions.create({ accountId, planCode: 'vip', billing: 'monthly', startedAt: new Date('2026-06-01T00:00:00.000Z') });
      expect(await t.repos.subscriptions.cancelActive(accountId, now)).toBe(2);
      expect(await t.repos.subscriptions.findActive(accountId, new Date('2026-07-01T00:00:00.000Z'))).toBeUndefined();
    });

    test('a cancelled subscription is never in force, even one without an end', async () => {
      const accountId = await newAccountId();
      const sub = await t.repos.subscriptions.create({ accountId, planCode: 'standard', billing: 'monthly', startedAt: new Date('2026-01-01T00:00:00.000Z') });
      await t.db.kysely.updateTable('subscriptions').set({ status: 'cancelled' }).where('id', '=', sub.id).execute();
      expect(await t.repos.subscriptions.findActive(accountId, new Date('2026-02-01T00:00:00.000Z'))).toBeUndefined();
      expect(await t.repos.subscriptions.cancelActive(accountId, new Date('2026-02-01T00:00:00.000Z'))).toBe(0);
    });
  });
});
