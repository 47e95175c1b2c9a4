import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { migrateToLatest, openDatabase } from '../../../../src/storage/database.ts';
import { WriteGate } from '../../../../src/storage/dialects/sqlite/write-gate.ts';

describe('the SQLite write gate', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vinhistory-gate-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lets a priority writer wait without blocking the event loop, and enter as soon as the holder leaves', async () => {
    const gate = new WriteGate();
    gate.enterYielding();
    let entered = false;
    const waiting = gate.enter().then(() => (entered = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The loop ran a timer meanwhile, and the writer still waits: it announced itself.
    expect(entered).toBe(false);
    expect(gate.waiting).toBe(1);
    gate.leave();
    await waiting;
    expect(entered).toBe(true);
    expect(gate.waiting).toBe(0);
    gate.leave();
  });

  it('lets a bulk writer in past a waiting priority writer once it has yielded for its bound (its floor)', async () => {
    const gate = new WriteGate();
    gate.enterYielding();
    let entered = false;
    const waiting = gate.enter().then(() => (entered = true));
    gate.leave();
    // Another priority writer entered since the bulk writer's entry (the floor needs one: it never
    // passes the same woken waiter twice), and left.
    await gate.enter();
    gate.leave();
    // The first still waits (its wake-up is queued on this loop) and the gate is free: a bulk
    // writer with no bound would wait for it for good; with one it goes first once the bound passed.
    expect(gate.waiting).toBe(1);
    gate.enterYielding(5);
    expect(entered).toBe(false);
    gate.leave();
    await waiting;
    expect(entered).toBe(true);
    gate.leave();
  });

  it("counts the search commits' waits, and the priority entries a bulk writer watches", async () => {
    const gate = new WriteGate();
    expect(gate.priorityEntries).toBe(0);
    await gate.enter(true);
    gate.leave();
    gate.enterYielding();
    const waiting = gate.enter(true);
    await new Promise((resolve) => setTimeout(resolve, 5));
    gate.leave();
    await waiting;
    gate.leave();
    // Not a search commit: entered, not counted.
    await gate.enter();
    gate.leave();
    expect(gate.priorityEntries).toBe(3);
    const waits = new WriteGate(gate.buffer).waits();
    expect(waits.commits).toBe(2);
    expect(waits.waited).toBe(1);
    expect(waits.maxMs).toBeGreaterThan(0);
    expect(waits.totalMs).toBe(waits.maxMs);
    expect(waits.buckets.reduce((a, b) => a + b, 0)).toBe(2);
    expect(waits.buckets).toHaveLength(waits.boundsMs.length + 1);
  });

  it("holds a Kysely transaction's writes on the server's connection at the gate while a bulk writer holds it", async () => {
    const db = await openDatabase({ kind: 'sqlite', file: path.join(dir, 'gated.sqlite') });
    try {
      await migrateToLatest(db);
      const writer = db.dialect.bulkWriter();
      expect(writer).not.toBeNull();
      const gate = new WriteGate(writer!.gate);
      gate.enterYielding();
      let committed = false;
      const write = db.kysely
        .transaction()
        .execute((trx) => sql`insert into settings (key, value, created_at) values ('gate-test', '1', '2026-01-01T00:00:00Z')`.execute(trx))
        .then(() => (committed = true));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(committed).toBe(false);
      expect(gate.waiting).toBe(1);
      gate.leave();
      await write;
      // Left by the transaction: a bulk writer enters again at once.
      gate.enterYielding();
      gate.leave();
    } finally {
      await db.close();
    }
  });

  it('has no bulk writer for an in-memory database (no second connection can reach it)', async () => {
    const db = await openDatabase({ kind: 'sqlite', file: ':memory:' });
    expect(db.dialect.bulkWriter()).toBeNull();
    await db.close();
  });
});
