import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { migrateToLatest, openDatabase, type Db, type DialectName } from '../../../src/storage/database.ts';
import { MailQueueRepository } from '../../../src/storage/repositories/mail-queue-repository.ts';
import { DIALECTS, newTestSchemaName } from '../../support/databases.ts';
import { TEST_POSTGRES_URL } from '../../support/env.ts';
import { randomEmail } from './helpers.ts';

const T0 = new Date('2026-06-01T10:00:00.000Z');
const LEASE_MS = 60_000;
const at = (ms: number) => new Date(T0.getTime() + ms);

/** Two handles on one database, as two instances have: a SQLite file opened twice, or one PostgreSQL schema through two pools. */
async function openTwo(dialect: DialectName): Promise<{ dbs: [Db, Db]; close(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(path.join(tmpdir(), 'vinhistory-mail-queue-'));
    const file = path.join(dir, 'vinhistory.sqlite');
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

describe.each(DIALECTS)('the mail queue (%s)', (dialect) => {
  let two: Awaited<ReturnType<typeof openTwo>>;
  let queue: MailQueueRepository;
  let other: MailQueueRepository;
  beforeAll(async () => {
    two = await openTwo(dialect);
    queue = new MailQueueRepository(two.dbs[0]);
    other = new MailQueueRepository(two.dbs[1]);
  });
  afterAll(async () => {
    await two?.close();
  });
  // Every test starts from an empty queue: claims take whatever is due.
  beforeEach(async () => {
    await two.dbs[0].kysely.deleteFrom('mail_queue').execute();
  });

  const enqueue = (now = T0) => queue.enqueue({ kind: 'password_reset', recipient: randomEmail(), subject: 'Reset your vinhistory password', body: 'Open {{reset_link}}\n' }, now);

  test('a queued message is claimed once, with an attempt counted, and settled as sent by its claim only', async () => {
    const id = await enqueue();
    expect(id).toMatch(/^mail_[0-9a-z]{16}$/);
    expect(await queue.claim(at(-1), LEASE_MS, 10)).toEqual([]);
    const [claimed, ...rest] = await queue.claim(T0, LEASE_MS, 10);
    expect(rest).toEqual([]);
    expect(claimed).toMatchObject({ id, status: 'queued', attempts: 1, leaseUntil: at(LEASE_MS).toISOString(), body: 'Open {{reset_link}}\n' });
    // Held: no other claim takes it while the lease lives.
    expect(await other.claim(at(LEASE_MS - 1), LEASE_MS, 10)).toEqual([]);
    expect(await queue.markSent({ id, claimId: 'not-the-claim' }, at(1000))).toBe(false);
    expect(await queue.markSent(claimed!, at(1000))).toBe(true);
    expect(await queue.find(id)).toMatchObject({ status: 'sent', sentAt: at(1000).toISOString(), attempts: 1, lastError: null });
    // Settled: never claimed again, and settling twice does nothing.
    expect(await other.claim(at(10 * LEASE_MS), LEASE_MS, 10)).toEqual([]);
    expect(await queue.markSent(claimed!, at(2000))).toBe(false);
  });

  test('a claim whose lease ran out (its worker died) is claimed again, and the old holder can no longer settle it', async () => {
    const id = await enqueue();
    const [first] = await queue.claim(T0, LEASE_MS, 10);
    const [second] = await other.claim(at(LEASE_MS), LEASE_MS, 10);
    expect(second).toMatchObject({ id, attempts: 2 });
    expect(second!.claimId).not.toBe(first!.claimId);
    expect(await queue.markSent(first!, at(LEASE_MS + 1))).toBe(false);
    expect(await other.markSent(second!, at(LEASE_MS + 1))).toBe(true);
  });

  test('a failed attempt waits for its next time, then is claimed again; a message given up stays, failed, with its error', async () => {
    const id = await enqueue();
    const [claimed] = await queue.claim(T0, LEASE_MS, 10);
    expect(await queue.retryLater(claimed!, at(30_000), 'connect ECONNREFUSED 127.0.0.1:2525')).toBe(true);
    expect(await queue.find(id)).toMatchObject({ status: 'queued', attempts: 1, nextAttemptAt: at(30_000).toISOString(), lastError: 'connect ECONNREFUSED 127.0.0.1:2525' });
    expect(await queue.summary()).toMatchObject({ queued: 1, retrying: 1 });
    expect(await queue.claim(at(29_999), LEASE_MS, 10)).toEqual([]);
    const [again] = await other.claim(at(30_000), LEASE_MS, 10);
    expect(again).toMatchObject({ id, attempts: 2 });
    expect(await other.giveUp(again!, at(31_000), 'x'.repeat(2000))).toBe(true);
    const failed = await queue.find(id);
    expect(failed).toMatchObject({ status: 'failed', failedAt: at(31_000).toISOString() });
    expect(failed!.lastError).toHaveLength(500);
    expect(await queue.claim(at(10 * LEASE_MS), LEASE_MS, 10)).toEqual([]);
    expect((await queue.list('failed', 10)).map((mail) => mail.id)).toEqual([id]);
  });

  test('claims take the most overdue first, up to the limit', async () => {
    const late = await enqueue(at(-5000));
    const later = await enqueue(at(-1000));
    const latest = await enqueue(at(0));
    expect((await queue.claim(T0, LEASE_MS, 2)).map((mail) => mail.id)).toEqual([late, later]);
    expect((await queue.claim(T0, LEASE_MS, 2)).map((mail) => mail.id)).toEqual([latest]);
  });

  test('40 claims at once from two instances: every message is claimed exactly once', async () => {
    const ids = await Promise.all(Array.from({ length: 30 }, () => enqueue()));
    const claims = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? queue : other).claim(T0, LEASE_MS, 2)));
    const claimed = claims.flat().map((mail) => mail.id);
    expect(claimed).toHaveLength(30);
    expect(new Set(claimed)).toEqual(new Set(ids));
  });

  test('the summary counts each status, and settled messages are pruned by age', async () => {
    const ids = await Promise.all(Array.from({ length: 4 }, () => enqueue()));
    const claimed = await queue.claim(T0, LEASE_MS, 10);
    const byId = new Map(claimed.map((mail) => [mail.id, mail]));
    await queue.markSent(byId.get(ids[0]!)!, T0);
    await queue.markSkipped(byId.get(ids[1]!)!, 'no account has this address');
    await queue.giveUp(byId.get(ids[2]!)!, T0, 'refused');
    await queue.retryLater(byId.get(ids[3]!)!, at(60_000), 'timeout');
    const later = await enqueue(at(1000));
    // A message being sent for the first time is queued, not retrying.
    await queue.claim(at(1000), LEASE_MS, 1);
    expect(await queue.summary()).toEqual({ queued: 2, retrying: 1, sent: 1, skipped: 1, failed: 1, oldestQueuedAt: T0.toISOString() });
    expect((await queue.list('retrying', 10)).map((mail) => mail.id)).toEqual([ids[3]]);
    expect(await queue.deleteSettled(['sent', 'skipped'], at(1))).toBe(2);
    expect(await queue.deleteSettled(['failed'], T0)).toBe(0);
    expect(await queue.summary()).toMatchObject({ queued: 2, sent: 0, skipped: 0, failed: 1 });
    expect(await queue.find(later)).toMatchObject({ status: 'queued' });
  });
});
