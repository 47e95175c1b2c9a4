import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type Db } from '../../src/storage/database.ts';
import { createRepositories } from '../../src/storage/repositories/index.ts';
import { createCustomer, makeLot, validVin } from '../support/fixtures.ts';
import { freePort, makeDataDir, startServe, stopServer } from './run-cli.ts';

/**
 * A batch survives a kill -9 of the server running it (contract, "Batches"): the restarted server
 * takes it up when its lease ends and counts no item twice. One process test; the lease, the
 * replays and the claims are tested in-process (test/http/api/v1/batches.test.ts).
 */
describe('vinhistory serve: a batch across a kill -9', () => {
  const data = makeDataDir();
  const file = path.join(data.dir, 'vinhistory.sqlite');
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    data.remove();
  });

  async function serve(port: number): Promise<{ child: ChildProcess; output: () => string }> {
    const child = startServe(data.dir, { PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'production', PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, BATCH_LEASE_MS: '2000', PDF_BROWSER_PATH: '/nonexistent/chromium' });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 60_000;
    for (;;) {
      const up = await fetch(`http://127.0.0.1:${port}/healthz`).then((res) => res.ok, () => false);
      if (up) return { child, output: () => output };
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function progress(db: Db, batchId: string): Promise<{ status: string; done: number; used: number }> {
    const batch = await db.kysely.selectFrom('batches').select('status').where('id', '=', batchId).executeTakeFirstOrThrow();
    const done = await db.kysely.selectFrom('batch_items').select((eb) => eb.fn.countAll<number>().as('n')).where('batch_id', '=', batchId).where('status', 'is not', null).executeTakeFirstOrThrow();
    const used = await db.kysely.selectFrom('usage_counters').select('used').executeTakeFirst();
    return { status: batch.status, done: Number(done.n), used: Number(used?.used ?? 0) };
  }

  it('resumes the batch after the restart and counts each item once', async () => {
    const vins = Array.from({ length: 12 }, (_, i) => validVin(`1FTFW1ET5DFK${String(i).padStart(4, '0')}`));
    const setup = await openDatabase({ kind: 'sqlite', file });
    await migrateToLatest(setup);
    const repos = createRepositories(setup);
    // Half of the VINs have lots: the others are counted 404s, as their searches would be.
    await repos.lots.upsertBatch(vins.filter((_, i) => i % 2 === 0).map((vin) => makeLot({ vin })));
    // 10 a second: the batch runs at 5 a second, long enough to be killed in the middle.
    const customer = await createCustomer(repos, { rate: 10 });
    await setup.close();

    const port = await freePort();
    const first = await serve(port);
    const created = await fetch(`http://127.0.0.1:${port}/api/v1/batches`, {
      method: 'POST',
      headers: { authorization: customer.token, 'content-type': 'text/csv' },
      body: `vin\n${vins.join('\n')}\n`,
    });
    expect(created.status, first.output()).toBe(202);
    const { id } = (await created.json()) as { id: string };

    const reader = await openDatabase({ kind: 'sqlite', file });
    try {
      let seen = await progress(reader, id);
      for (const deadline = Date.now() + 30_000; seen.done < 2 && Date.now() < deadline; seen = await progress(reader, id)) await new Promise((resolve) => setTimeout(resolve, 20));
      first.child.kill('SIGKILL');
      await new Promise((resolve) => first.child.once('exit', resolve));
      const atKill = await progress(reader, id);
      expect(atKill.done, first.output()).toBeGreaterThanOrEqual(2);
      expect(atKill.status).toBe('running');

      const second = await serve(port);
      try {
        let after = await progress(reader, id);
        for (const deadline = Date.now() + 45_000; after.status !== 'done' && Date.now() < deadline; after = await progress(reader, id)) await new Promise((resolve) => setTimeout(resolve, 100));
        expect(after, second.output()).toEqual({ status: 'done', done: 12, used: 12 });
        const searches = await reader.kysely.selectFrom('searches').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        expect(Number(searches.n)).toBe(12);
        const batch = (await (await fetch(`http://127.0.0.1:${port}/api/v1/batches/${id}`, { headers: { authorization: customer.token } })).json()) as { counts: Record<string, number> };
        expect(batch.counts).toEqual({ 200: 6, 404: 6 });
      } finally {
        await stopServer(second.child);
      }
    } finally {
      await reader.close();
    }
  }, 120_000);
});
