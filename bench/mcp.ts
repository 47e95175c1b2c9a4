/**
 * The MCP benchmark (`npm run bench:mcp -- [options]`): what a search costs through the MCP
 * server's search_vin beside the same search through the REST API, on the real server (`serve`,
 * NODE_ENV=production, SQLite, synthetic lots). One request in flight at a time, so that a
 * request's time is the server's own plus the loopback, never a queue: blocks of REST searches and
 * of search_vin calls alternate (so that drift of a shared machine falls on both alike), each
 * block timed per request and by the server's CPU seconds (/proc). The overhead is the difference
 * of the medians (target: under 2 ms). With --instructions the same server runs under valgrind's
 * callgrind and the blocks are counted in instructions per search instead (a figure that does not
 * depend on the machine's load, for comparing two trees on a shared machine). See docs/benchmarks.md.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { prepareSearchDatabase } from './support/search-data.ts';
import { replaceDocSection } from './support/benchmarks-doc.ts';
import { Child, freePort, waitUntilReady } from './support/children.ts';
import { summariseLatencies, type LatencySummary } from './support/latencies.ts';
import { CallgrindServer } from './support/callgrind.ts';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC_FILE = path.join(REPO_ROOT, 'docs', 'benchmarks.md');
const HOST = '127.0.0.1';
const TARGET_OVERHEAD_MS = 2;

const USAGE = `usage: npm run bench:mcp -- [options]

  --lots N      synthetic lots to load (default 20000)
  --seed N      seed of the synthetic lots (default 1)
  --rounds N    rounds of one REST block and one MCP block (default 10; 3 with --instructions)
  --block N     searches per block (default 300; 200 with --instructions)
  --warmup N    searches of each kind before measuring, not counted (default 500; 300 with --instructions)
  --instructions
                run the server under valgrind's callgrind and count instructions per search
                in each block instead of timing it (needs valgrind; minutes, not seconds)
  --write       write the figures into docs/benchmarks.md (otherwise only print them)
`;

class UsageError extends Error {}

const log = (message: string) => process.stderr.write(`${message}\n`);
const ms = (value: number) => value.toFixed(3);

const children: { killNow(): void; stop(): Promise<void> }[] = [];
let tempDir: string | null = null;

type Kind = 'rest' | 'mcp';

interface Client {
  search(kind: Kind, vin: string): Promise<void>;
}

/** One search of each kind, as a client sends it; an answer that is not a report fails the run. */
function client(baseUrl: string, token: string): Client {
  let id = 0;
  const rest = (vin: string) =>
    fetch(`${baseUrl}/api/v1/search`, { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify({ vin }) });
  const mcp = (vin: string) =>
    fetch(`${baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: token,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'search_vin', arguments: { vin } } }),
    });
  return {
    async search(kind, vin) {
      const response = await (kind === 'rest' ? rest(vin) : mcp(vin));
      const text = await response.text();
      if (response.status !== 200) throw new Error(`${kind} search of ${vin} answered ${response.status}: ${text.slice(0, 300)}`);
      if (kind === 'mcp' && (JSON.parse(text) as { result?: { isError?: boolean } }).result?.isError === true) {
        throw new Error(`search_vin of ${vin} answered a tool error: ${text.slice(0, 300)}`);
      }
    },
  };
}

interface Settings {
  lots: number;
  seed: number;
  rounds: number;
  block: number;
  warmup: number;
}

/** The order of a round's two blocks: switched each round, so that neither kind always follows the other. */
const orderOf = (round: number): Kind[] => (round % 2 === 0 ? ['rest', 'mcp'] : ['mcp', 'rest']);

const stamp = () => `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'CPU'}, Node ${process.version}`;

/** Timed blocks, one request in flight, the server's CPU read from /proc around each block. */
async function timed(settings: Settings, command: string, childEnv: NodeJS.ProcessEnv, baseUrl: string, vins: string[], token: string): Promise<string> {
  log(`starting the server on ${baseUrl}`);
  const server = Child.start('the server', ['bin/vinhistory.js', 'serve'], { cwd: REPO_ROOT, env: childEnv });
  children.push(server);
  await waitUntilReady(server, `${baseUrl}/healthz`);

  const searches = client(baseUrl, token);
  let next = 0;
  const vin = () => vins[next++ % vins.length]!;
  log(`warming up: ${settings.warmup} searches of each kind`);
  for (let i = 0; i < settings.warmup; i++) {
    await searches.search('rest', vin());
    await searches.search('mcp', vin());
  }

  const samples: Record<Kind, number[]> = { rest: [], mcp: [] };
  const cpu: Record<Kind, number> = { rest: 0, mcp: 0 };
  log(`measuring: ${settings.rounds} rounds of ${settings.block} REST searches and ${settings.block} search_vin calls`);
  for (let round = 0; round < settings.rounds; round++) {
    for (const kind of orderOf(round)) {
      const cpuBefore = await server.cpuSeconds();
      for (let i = 0; i < settings.block; i++) {
        const started = performance.now();
        await searches.search(kind, vin());
        samples[kind].push(performance.now() - started);
      }
      const cpuAfter = await server.cpuSeconds();
      if (cpuBefore !== null && cpuAfter !== null) cpu[kind] += cpuAfter - cpuBefore;
    }
  }

  const rest = summariseLatencies(samples.rest);
  const mcp = summariseLatencies(samples.mcp);
  const perCall = (kind: Kind) => (cpu[kind] * 1e6) / samples[kind].length;
  const overhead = mcp.p50 - rest.p50;
  const row = (name: string, s: LatencySummary, kind: Kind) =>
    `| ${name} | ${s.count} | ${ms(s.p50)} | ${ms(s.p90)} | ${ms(s.p99)} | ${cpu[kind] > 0 ? perCall(kind).toFixed(0) : 'n/a'} |`;
  return [
    `\`${command}\`, ${stamp()}, ${settings.lots.toLocaleString('en-US')} synthetic lots on SQLite, one request in flight:`,
    '',
    '| path | searches | p50 (ms) | p90 (ms) | p99 (ms) | server CPU per search (µs) |',
    '|---|---|---|---|---|---|',
    row('REST `POST /api/v1/search`', rest, 'rest'),
    row('MCP `search_vin` (`POST /mcp`)', mcp, 'mcp'),
    '',
    `Median overhead of search_vin over the REST search: **${ms(overhead)} ms** (target < ${TARGET_OVERHEAD_MS} ms: ${overhead < TARGET_OVERHEAD_MS ? 'met' : 'NOT met'}); ` +
      `server CPU ${cpu.mcp > 0 && cpu.rest > 0 ? `${(perCall('mcp') - perCall('rest')).toFixed(0)} µs more per search` : 'not measured (no /proc)'}.`,
  ].join('\n');
}

/**
 * The same blocks with the server under callgrind: each block's instructions (every thread of the
 * server, zeroed before the block and dumped after it) divided by its searches. The figure of a
 * kind is the median of its blocks; the spread of the blocks is printed beside it.
 */
async function instructions(settings: Settings, command: string, childEnv: NodeJS.ProcessEnv, baseUrl: string, vins: string[], token: string): Promise<string> {
  log(`starting the server under callgrind on ${baseUrl} (slow: a minute or more)`);
  // Background work that polls on a timer (webhook deliveries, feed pulls) is counted by wall time,
  // not by search, and a search takes far longer under valgrind than without: off, so that the
  // blocks count the searches rather than how long a loaded machine took over them.
  const env = { ...childEnv, WEBHOOK_WORKER: 'false', FEEDS_WORKER: 'false' };
  const server = await CallgrindServer.launch(['bin/vinhistory.js', 'serve'], { cwd: REPO_ROOT, env });
  children.push(server);
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the server did not start under callgrind:\n${server.recentOutput}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const searches = client(baseUrl, token);
  let next = 0;
  const vin = () => vins[next++ % vins.length]!;
  const both = async (count: number) => {
    for (let i = 0; i < count; i++) {
      await searches.search('rest', vin());
      await searches.search('mcp', vin());
    }
  };
  log(`warming up: ${settings.warmup} searches of each kind`);
  await both(settings.warmup);
  // Instrumenting translates the code afresh: a few searches of each kind under it before counting.
  await server.start();
  await both(100);

  const perSearch: Record<Kind, number[]> = { rest: [], mcp: [] };
  log(`counting: ${settings.rounds} rounds of ${settings.block} REST searches and ${settings.block} search_vin calls`);
  for (let round = 0; round < settings.rounds; round++) {
    for (const kind of orderOf(round)) {
      await server.zero();
      for (let i = 0; i < settings.block; i++) await searches.search(kind, vin());
      const counted = (await server.dump()) / settings.block;
      perSearch[kind].push(counted);
      log(`round ${round + 1}, ${kind}: ${Math.round(counted).toLocaleString('en-US')} instructions per search`);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const k = (value: number) => `${(value / 1000).toLocaleString('en-US', { maximumFractionDigits: 0 })}k`;
  const row = (name: string, kind: Kind) =>
    `| ${name} | ${perSearch[kind].length} × ${settings.block} | ${k(median(perSearch[kind]))} | ${k(Math.min(...perSearch[kind]))} to ${k(Math.max(...perSearch[kind]))} |`;
  const extra = median(perSearch.mcp) - median(perSearch.rest);
  return [
    `\`${command}\`, ${stamp()}, ${settings.lots.toLocaleString('en-US')} synthetic lots on SQLite, the server under callgrind, one request in flight:`,
    '',
    '| path | blocks × searches | instructions per search (median of blocks) | blocks\' range |',
    '|---|---|---|---|',
    row('REST `POST /api/v1/search`', 'rest'),
    row('MCP `search_vin` (`POST /mcp`)', 'mcp'),
    '',
    `search_vin costs **${k(extra)} instructions more** per search than the REST search (${((extra / median(perSearch.rest)) * 100).toFixed(0)} % of it).`,
  ].join('\n');
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const { values } = parseArgs({
    args: argv,
    options: {
      lots: { type: 'string', default: '20000' },
      seed: { type: 'string', default: '1' },
      rounds: { type: 'string' },
      block: { type: 'string' },
      warmup: { type: 'string' },
      instructions: { type: 'boolean', default: false },
      write: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const counting = values.instructions;
  const settings: Settings = {
    lots: Number(values.lots),
    seed: Number(values.seed),
    rounds: Number(values.rounds ?? (counting ? 3 : 10)),
    block: Number(values.block ?? (counting ? 200 : 300)),
    warmup: Number(values.warmup ?? (counting ? 300 : 500)),
  };
  for (const [name, value] of Object.entries(settings)) {
    if (!Number.isInteger(value) || value < (name === 'warmup' ? 0 : 1)) throw new UsageError(`--${name} takes a whole number${name === 'warmup' ? '' : ' of 1 or more'}`);
  }
  const command = `npm run bench:mcp${argv.length ? ` -- ${argv.join(' ')}` : ''}`;

  tempDir = await mkdtemp(path.join(os.tmpdir(), 'vinhistory-bench-mcp-'));
  const port = await freePort();
  const baseUrl = `http://${HOST}:${port}`;
  const serverEnv: Record<string, string> = { NODE_ENV: 'production', DATA_DIR: path.join(tempDir, 'data'), PORT: String(port), HOST, PUBLIC_BASE_URL: baseUrl, LOG_LEVEL: 'warn' };
  const { vins, token } = await prepareSearchDatabase({ lots: settings.lots, seed: settings.seed, dataDir: null }, serverEnv, log);

  const childEnv = { ...process.env, ...serverEnv };
  // One process on SQLite with the in-memory rate limiter, whatever the shell has set.
  delete childEnv.DATABASE_URL;
  delete childEnv.REDIS_URL;
  const report = counting ? await instructions(settings, command, childEnv, baseUrl, vins, token) : await timed(settings, command, childEnv, baseUrl, vins, token);
  process.stdout.write(`\n${report}\n`);
  if (values.write) {
    await replaceDocSection(DOC_FILE, counting ? 'mcp-instructions' : 'mcp', '## MCP: `npm run bench:mcp`', report);
    log(`wrote the figures into ${path.relative(REPO_ROOT, DOC_FILE)}`);
  }
}

async function cleanUp(): Promise<void> {
  for (const child of children) await child.stop();
  if (tempDir) await rm(tempDir, { recursive: true, force: true });
}

// Ctrl-C must not leave the server listening or a database in /tmp behind.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`\n${signal}: stopping`);
    for (const child of children) child.killNow();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    process.exit(130);
  });
}

try {
  await main();
} catch (error) {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    log(`${(error as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else {
    log(`bench:mcp failed: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  }
} finally {
  await cleanUp();
}
