/**
 * The leanest prototype of "a search commits while a pull writes" (issue 25's last target: the
 * search p99 during a pull within 20% of idle), better-sqlite3 only, no app: what the limit is on
 * this machine, and which of the write lock and the CPU sets it.
 *
 * A 200,000-row `lots` table (a few indexes, a JSON text) is rewritten by a worker thread at the
 * pull's niceness in transactions of about 0.5 ms of lock (sized from the least lock time a row of
 * the last 16, as ingest/worker/write-slices.ts does), while the main thread searches: reads a lot
 * by VIN, then in one transaction adds a report row and counts the search in a usage row (what a
 * search commit writes, in small). Modes, each a phase of the same run, in turn:
 *
 * - idle: no writer;
 * - shared: the writer on the searches' file, both through a gate like the product's
 *   (storage/dialects/sqlite/write-gate.ts): a waiting search goes first, the writer yields at most
 *   5 ms before each transaction;
 * - apart: the writer on a copy of the file: the same CPU work, no lock in common;
 * - attached: the writer on the searches' file, the searches' writes in a file of their own
 *   ATTACHed to the searches' connection, in DEFERRED transactions (they take the attached file's
 *   write lock only; BEGIN IMMEDIATE would take every attached file's);
 * - apart at a pace: as apart, the writer sleeping after each transaction so that it is busy
 *   `share` of the time (--paces).
 *
 * Searches run back to back (closed loop) or at fixed rates (open loop: each latency from its due
 * time; --rates). See docs/benchmarks.md, "Feeds", "The limit: a lean prototype".
 *
 * Usage: npm run bench:search-lock-limit -- [--rows 200000] [--seconds 5] [--rates 200,1000] [--paces 0.5,0.25] [--modes ...]
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { summariseLatencies } from './support/latencies.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '200000' },
    seconds: { type: 'string', default: '5' },
    rates: { type: 'string', default: '200,1000' },
    paces: { type: 'string', default: '0.5,0.25' },
    modes: { type: 'string', default: 'idle,shared,apart,attached,paced,idle' },
    'slice-ms': { type: 'string', default: '0.5' },
    nice: { type: 'string', default: '19' },
  },
});
const rows = Number(values.rows);
const seconds = Number(values.seconds);
const rates = values.rates === '' ? [] : values.rates.split(',').map(Number);
const paces = values.paces === '' ? [] : values.paces.split(',').map(Number);
const modes = values.modes.split(',');
const sliceMs = Number(values['slice-ms']);
const nice = Number(values.nice);

const SCHEMA = `
create table if not exists lots (id integer primary key, vin text not null, auction text not null, lot_id integer not null,
  make text, model text, year integer, price integer, seen_at text, data text not null, unique (auction, lot_id));
create index if not exists lots_vin on lots (vin);
create index if not exists lots_make_model on lots (make, model, year);
create index if not exists lots_seen on lots (seen_at);
`;
const SEARCH_SCHEMA = `
create table if not exists reports (id integer primary key, vin text not null, created_at text not null, body text not null);
create index if not exists reports_vin on reports (vin);
create table if not exists usage (account integer primary key, used integer not null);
insert or ignore into usage values (1, 0);
`;

function open(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('cache_size = -65536');
  return db;
}

/** This thread's CPU time and its time waiting for a core so far, ms (Linux schedstat), or null. */
function schedstat(): { cpu: number; queued: number } | null {
  try {
    const [cpu, queued] = fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return { cpu: cpu! / 1e6, queued: queued! / 1e6 };
  } catch {
    return null;
  }
}

const vinOf = (i: number) => `1HGCM${String(i).padStart(12, '0')}`;

function build(file: string): void {
  const db = open(file);
  db.exec(SCHEMA);
  const insert = db.prepare('insert into lots (vin, auction, lot_id, make, model, year, price, seen_at, data) values (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const makes = ['TOYOTA', 'HONDA', 'FORD', 'BMW', 'KIA', 'TESLA'];
  db.transaction(() => {
    for (let i = 0; i < rows; i++) {
      const make = makes[i % makes.length]!;
      insert.run(vinOf(i), 'copart', 10_000_000 + i, make, `M${i % 40}`, 2000 + (i % 24), 1000 + (i % 9000), new Date(2026, 0, 1).toISOString(), JSON.stringify({ vin: vinOf(i), make, damage: 'FRONT END', odometer: i * 7, notes: 'x'.repeat(200) }));
    }
  })();
  db.exec(SEARCH_SCHEMA);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** The pull in small: rewrites every lot in slices, the gate taken around each (shared and attached take the lock in common). */
const WRITER = `
const { parentPort, workerData } = require('node:worker_threads');
try { require('node:os').setPriority(Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()), workerData.nice); } catch {}
const Database = require(workerData.sqlite);
const db = new Database(workerData.file);
db.pragma('journal_mode = WAL'); db.pragma('synchronous = NORMAL'); db.pragma('busy_timeout = 5000'); db.pragma('cache_size = -65536');
const gate = workerData.gate ? new Int32Array(workerData.gate) : null;
const stop = new Int32Array(workerData.stop);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const update = db.prepare("update lots set price = price + 1, seen_at = ?, data = json_set(data, '$.pass', ?) where auction = 'copart' and lot_id = ?");
const perLot = [];
let row = 0, pass = 0, lots = 0, transactions = 0, heldTotal = 0, busy = 0;
const began = performance.now();
parentPort.postMessage('writing');
while (Atomics.load(stop, 0) === 0) {
  const count = perLot.length === 0 ? 8 : Math.max(1, Math.floor(workerData.sliceMs / Math.min(...perLot)));
  const t0 = performance.now();
  if (gate) {
    // Yields to a waiting search for at most 5 ms, then takes the gate when its holder leaves.
    const deadline = t0 + 5;
    for (;;) {
      while (Atomics.load(gate, 1) > 0 && performance.now() < deadline) Atomics.wait(gate, 1, Atomics.load(gate, 1), Math.max(0, deadline - performance.now()));
      if (Atomics.compareExchange(gate, 0, 0, 1) === 0) break;
      Atomics.wait(gate, 0, 1, 1);
    }
  }
  const h0 = performance.now();
  const seen = new Date().toISOString();
  db.transaction(() => {
    for (let i = 0; i < count; i++) { update.run(seen, pass, 10000000 + row); row++; if (row === workerData.rows) { row = 0; pass++; } }
  })();
  const held = performance.now() - h0;
  if (gate) { Atomics.store(gate, 0, 0); Atomics.notify(gate, 0); }
  if (perLot.length === 16) perLot.shift();
  perLot.push(held / count);
  lots += count; transactions++; heldTotal += held;
  const work = performance.now() - t0;
  busy += work;
  // At a pace: asleep long enough that the thread is busy share of the time.
  if (workerData.share < 1) Atomics.wait(sleeper, 0, 0, (work * (1 - workerData.share)) / workerData.share);
}
const elapsed = (performance.now() - began) / 1000;
parentPort.postMessage({ lotsPerSecond: lots / elapsed, transactions, meanHeldMs: heldTotal / transactions, busyShare: busy / 1000 / elapsed });
`;

type Mode = { name: string; writerFile: string | null; gate: boolean; attached: boolean; share: number };

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vinhistory-lock-limit-'));
  const main = path.join(dir, 'lots.db');
  const copy = path.join(dir, 'lots-copy.db');
  const own = path.join(dir, 'searches.db');
  process.stderr.write(`building ${rows} lots\n`);
  build(main);
  fs.copyFileSync(main, copy);
  {
    const db = open(own);
    db.exec(SEARCH_SCHEMA);
    db.close();
  }

  // The searches' connection: the lots and the searches' own writes in the main file; the attached
  // file (as "own") holds the same tables for the attached mode.
  const db = open(main);
  db.prepare('attach database ? as own').run(own);
  const read = db.prepare('select id, vin, make, model, year, price, data from lots where vin = ?');
  const writes = (schema: string) => ({
    report: db.prepare(`insert into ${schema}.reports (vin, created_at, body) values (?, ?, ?)`),
    usage: db.prepare(`update ${schema}.usage set used = used + 1 where account = 1`),
    begin: db.prepare(schema === 'main' ? 'begin immediate' : 'begin deferred'),
    commit: db.prepare('commit'),
  });
  const inMain = writes('main');
  const inOwn = writes('own');
  const gateBuffer = new SharedArrayBuffer(8);
  const gate = new Int32Array(gateBuffer);
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  let next = 0;

  const search = (mode: Mode) => {
    const row = read.get(vinOf((next++ * 7_919) % rows)) as { vin: string } | undefined;
    const w = mode.attached ? inOwn : inMain;
    if (mode.gate && !mode.attached) {
      if (Atomics.compareExchange(gate, 0, 0, 1) !== 0) {
        Atomics.add(gate, 1, 1);
        while (Atomics.compareExchange(gate, 0, 0, 1) !== 0) Atomics.wait(gate, 0, 1);
        Atomics.sub(gate, 1, 1);
        Atomics.notify(gate, 1);
      }
    }
    try {
      w.begin.run();
      w.report.run(row!.vin, new Date().toISOString(), JSON.stringify(row));
      w.usage.run();
      w.commit.run();
    } finally {
      if (mode.gate && !mode.attached) {
        Atomics.store(gate, 0, 0);
        Atomics.notify(gate, 0);
      }
    }
  };

  const phase = async (mode: Mode, rate: number | null) => {
    const stop = new Int32Array(new SharedArrayBuffer(4));
    let writer: Worker | null = null;
    let report: Promise<{ lotsPerSecond: number; transactions: number; meanHeldMs: number; busyShare: number }> | null = null;
    if (mode.writerFile) {
      writer = new Worker(WRITER, {
        eval: true,
        workerData: { sqlite: createRequire(import.meta.url).resolve('better-sqlite3'), file: mode.writerFile, gate: mode.gate ? gateBuffer : null, stop: stop.buffer, rows, sliceMs, nice, share: mode.share },
      });
      const w = writer;
      await new Promise((ready) => w.once('message', ready));
      report = new Promise((done) => w.once('message', done));
      // The writer's first slices before the searches: its sizes settled.
      Atomics.wait(sleeper, 0, 0, 200);
    }
    const samples: number[] = [];
    const sched = schedstat();
    const began = performance.now();
    const end = began + seconds * 1000;
    if (rate === null) {
      while (performance.now() < end) {
        const t0 = performance.now();
        search(mode);
        samples.push(performance.now() - t0);
      }
    } else {
      const interval = 1000 / rate;
      for (let k = 0; ; k++) {
        const due = began + k * interval;
        if (due >= end) break;
        const wait = due - performance.now();
        if (wait > 0) Atomics.wait(sleeper, 0, 0, wait);
        search(mode);
        samples.push(performance.now() - due);
      }
    }
    const schedAfter = schedstat();
    Atomics.store(stop, 0, 1);
    const perSearch = (ms: number) => `${((1000 * ms) / samples.length).toFixed(1)} µs`;
    const thread = sched && schedAfter ? `; a search's CPU ${perSearch(schedAfter.cpu - sched.cpu)}, waiting for a core ${perSearch(schedAfter.queued - sched.queued)}` : '';
    const written = report ? await report : null;
    await writer?.terminate();
    return { ...summariseLatencies(samples), written, thread };
  };

  const all: Mode[] = [];
  for (const name of modes) {
    if (name === 'idle') all.push({ name, writerFile: null, gate: false, attached: false, share: 1 });
    else if (name === 'shared') all.push({ name, writerFile: main, gate: true, attached: false, share: 1 });
    else if (name === 'apart') all.push({ name, writerFile: copy, gate: false, attached: false, share: 1 });
    else if (name === 'attached') all.push({ name, writerFile: main, gate: false, attached: true, share: 1 });
    else if (name === 'paced') for (const share of paces) all.push({ name: `apart, busy ${share}`, writerFile: copy, gate: false, attached: false, share });
    else if (name === 'attached-paced') for (const share of paces) all.push({ name: `attached, busy ${share}`, writerFile: main, gate: false, attached: true, share });
    else throw new Error(`unknown mode ${name}`);
  }
  const lines = [`machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}; ${rows} lots, ${seconds} s a phase, writer at nice ${nice}, slices of ${sliceMs} ms`, `load average at the start: ${os.loadavg().map((l) => l.toFixed(2)).join(', ')}`];
  for (const rate of [null, ...rates]) {
    lines.push(`-- ${rate === null ? 'closed loop' : `${rate} searches a second (open loop)`}`);
    for (const mode of all) {
      process.stderr.write(`${rate ?? 'closed'}: ${mode.name}\n`);
      const r = await phase(mode, rate);
      const w = r.written ? `; writer ${Math.round(r.written.lotsPerSecond)} lots/s, ${r.written.transactions} transactions of ${r.written.meanHeldMs.toFixed(2)} ms mean, busy ${r.written.busyShare.toFixed(2)}` : '';
      lines.push(`${mode.name.padEnd(18)} ${String(r.count).padStart(7)} searches, p50 ${r.p50.toFixed(3)} ms, p99 ${r.p99.toFixed(3)} ms, max ${r.max.toFixed(1)} ms${r.thread}${w}`);
    }
  }
  lines.push(`load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(', ')}`);
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
