import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AccountAuthService } from '../../src/accounts/account-auth-service.ts';
import { MailQueue } from '../../src/accounts/mail/mail-queue.ts';
import { PasswordHasher } from '../../src/accounts/password-hasher.ts';
import { SessionService } from '../../src/accounts/session-service.ts';
import { addressSubject, emailSubject, LOGIN_PER_ADDRESS, LOGIN_PER_EMAIL, SIGNUP_PER_ADDRESS, Throttle, type Reserved } from '../../src/accounts/throttle.ts';
import { migrateToLatest, openDatabase, type Db, type DialectName } from '../../src/storage/database.ts';
import { createRepositories } from '../../src/storage/repositories/index.ts';
import { createTestDatabase, DIALECTS, newTestSchemaName, type TestDatabase } from '../support/databases.ts';
import { TEST_POSTGRES_URL } from '../support/env.ts';
import { randomEmail, TEST_SCRYPT } from '../support/customer-app.ts';

const PASSWORD = 'correct horse battery';
const MINUTE = 60_000;
const T0 = new Date('2026-04-01T08:00:00.000Z');
const after = (ms: number) => new Date(T0.getTime() + ms);

/**
 * Two handles on one database, as two instances of a deployment have: a SQLite file opened twice
 * (two connections), or one PostgreSQL schema through two pools.
 */
async function openTwoInstances(dialect: DialectName): Promise<{ dbs: [Db, Db]; close(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(path.join(tmpdir(), 'vinhistory-throttle-'));
    const file = path.join(dir, 'vinhistory.db');
    const first = await openDatabase({ kind: 'sqlite', file });
    await migrateToLatest(first);
    const second = await openDatabase({ kind: 'sqlite', file });
    return {
      dbs: [first, second],
      close: async () => {
        await Promise.all([first.close(), second.close()]);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = newTestSchemaName();
  const first = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema });
  await migrateToLatest(first);
  const second = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema });
  return { dbs: [first, second], close: async () => void (await Promise.all([first.close(), second.close()])) };
}

/** scrypt plus a fixed delay: the window between an attempt arriving and its outcome, as on a busy server. */
class DelayedHasher extends PasswordHasher {
  override async verify(password: string, stored: string): Promise<boolean> {
    await new Promise((resolve) => setTimeout(resolve, 150));
    return super.verify(password, stored);
  }

  override async burn(password: string): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 150));
    return super.burn(password);
  }
}

function authService(db: Db): AccountAuthService {
  const repos = createRepositories(db);
  return new AccountAuthService({
    db,
    repos,
    hasher: new DelayedHasher(TEST_SCRYPT),
    sessions: new SessionService(repos),
    mail: new MailQueue(repos.mailQueue),
    publicBaseUrl: 'https://vinhistory.test',
    resetPath: '/reset-password',
  });
}

const kinds = (outcomes: { kind: string }[]) =>
  outcomes.reduce<Record<string, number>>((counts, { kind }) => ({ ...counts, [kind]: (counts[kind] ?? 0) + 1 }), {});

describe.each(DIALECTS)('throttles reserve before they verify, atomically across instances (%s)', (dialect) => {
  let instances: Awaited<ReturnType<typeof openTwoInstances>>;
  let throttles: [Throttle, Throttle];
  let services: [AccountAuthService, AccountAuthService];
  beforeAll(async () => {
    instances = await openTwoInstances(dialect);
    throttles = [new Throttle(createRepositories(instances.dbs[0]).authAttempts), new Throttle(createRepositories(instances.dbs[1]).authAttempts)];
    services = [authService(instances.dbs[0]), authService(instances.dbs[1])];
  });
  afterAll(async () => {
    await instances?.close();
  });

  test('40 reservations at once on two instances: exactly the limit are granted, the rest told when to come back', async () => {
    const subject = emailSubject(randomEmail());
    const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => throttles[i % 2]!.reserve([{ rule: LOGIN_PER_EMAIL, subject }], T0)));
    expect(kinds(outcomes)).toEqual({ reserved: 5, throttled: 35 });
    for (const outcome of outcomes) if (outcome.kind === 'reserved') expect(outcome.ids).toEqual([expect.stringMatching(/^att_[0-9a-z]{16}$/)]);
    for (const outcome of outcomes) if (outcome.kind === 'throttled') expect(outcome.retryAfterMs).toBe(LOGIN_PER_EMAIL.windowMs);
    // A released reservation frees its place for the next attempt.
    await throttles[0].release(outcomes.find((outcome): outcome is Reserved => outcome.kind === 'reserved')!);
    expect((await throttles[1].reserve([{ rule: LOGIN_PER_EMAIL, subject }], T0)).kind).toBe('reserved');
    expect((await throttles[0].reserve([{ rule: LOGIN_PER_EMAIL, subject }], T0)).kind).toBe('throttled');
  });

  test('one reservation under two rules takes both places or neither', async () => {
    const address = addressSubject('203.0.113.7');
    const emails = Array.from({ length: 30 }, () => emailSubject(randomEmail()));
    const outcomes = await Promise.all(
      emails.map((email, i) => throttles[i % 2]!.reserve([{ rule: LOGIN_PER_EMAIL, subject: email }, { rule: LOGIN_PER_ADDRESS, subject: address }], T0)),
    );
    expect(kinds(outcomes)).toEqual({ reserved: 20, throttled: 10 });
    const repos = createRepositories(instances.dbs[0]);
    const since = new Date(T0.getTime() - 1);
    expect((await repos.authAttempts.since('login_failure', address, since)).count).toBe(20);
    // A refused reservation left nothing behind under the rule that still had room.
    const counted = await Promise.all(emails.map((email) => repos.authAttempts.since('login_failure', email, since)));
    expect(counted.filter(({ count }) => count === 1)).toHaveLength(20);
    expect(counted.filter(({ count }) => count === 0)).toHaveLength(10);
  });

  test('41 log-ins at once on two instances, the right password last: 5 are checked, the rest refused unchecked', async () => {
    const email = randomEmail();
    expect((await services[0].signUp({ email, password: PASSWORD, acceptedTerms: true, ip: '198.51.100.1', now: new Date() })).kind).toBe('ok');
    const passwords = [...Array.from({ length: 40 }, (_, i) => `wrong guess ${i}!!`), PASSWORD];
    const outcomes = await Promise.all(
      passwords.map((password, i) => services[i % 2]!.logIn({ email, password, ip: `198.51.100.${10 + i}`, now: new Date() })),
    );
    expect(kinds(outcomes)).toEqual({ invalid: 5, throttled: 36 });
    expect(outcomes.at(-1)!.kind).toBe('throttled');
  });

  test('20 sign-ups at once from one address on two instances: 10 accounts', async () => {
    // Each test has its own address: the schema is shared within this describe, and a shared
    // address would carry one test's places into the other.
    const ip = '198.51.100.120';
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => services[i % 2]!.signUp({ email: randomEmail(), password: PASSWORD, acceptedTerms: true, ip, now: new Date() })),
    );
    expect(kinds(outcomes)).toEqual({ ok: 10, throttled: 10 });
  });

  test('a sign-up refused for a taken email does not use up a place', async () => {
    const ip = '198.51.100.140';
    const taken = randomEmail();
    expect((await services[0].signUp({ email: taken, password: PASSWORD, acceptedTerms: true, ip, now: new Date() })).kind).toBe('ok');
    for (let i = 0; i < 12; i++) expect((await services[i % 2]!.signUp({ email: taken, password: PASSWORD, acceptedTerms: true, ip, now: new Date() })).kind).toBe('invalid');
    const rest = await Promise.all(Array.from({ length: 9 }, () => services[1].signUp({ email: randomEmail(), password: PASSWORD, acceptedTerms: true, ip, now: new Date() })));
    expect(kinds(rest)).toEqual({ ok: 9 });
    expect(await throttles[0].retryAfterMs(SIGNUP_PER_ADDRESS, addressSubject(ip), new Date())).toBeGreaterThan(0);
  });
});

describe.each(DIALECTS)('throttling on one instance (%s)', (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  test('throttling counts in a sliding window and says when the next attempt is allowed', async () => {
    const throttle = new Throttle(t.repos.authAttempts);
    const subject = `email:${randomEmail()}`;
    for (let i = 0; i < 5; i++) {
      expect(await throttle.retryAfterMs(LOGIN_PER_EMAIL, subject, after(i * MINUTE))).toBe(0);
      expect((await throttle.reserve([{ rule: LOGIN_PER_EMAIL, subject }], after(i * MINUTE))).kind).toBe('reserved');
    }
    expect(await throttle.reserve([{ rule: LOGIN_PER_EMAIL, subject }], after(5 * MINUTE))).toEqual({ kind: 'throttled', retryAfterMs: 10 * MINUTE });
    // The oldest of the five ages out 15 minutes after it was made.
    expect(await throttle.retryAfterMs(LOGIN_PER_EMAIL, subject, after(5 * MINUTE))).toBe(10 * MINUTE);
    expect(await throttle.retryAfterMs(LOGIN_PER_EMAIL, subject, after(15 * MINUTE + 1))).toBe(0);
    await throttle.clear(LOGIN_PER_EMAIL, subject);
    expect(await throttle.retryAfterMs(LOGIN_PER_EMAIL, subject, after(5 * MINUTE))).toBe(0);
  });
});
