/**
 * The MCP benchmark (`npm run bench:mcp -- [options]`): what a search costs through the MCP
 * server's search_vin beside the same search through the REST API, on the real server (`serve`,
 * NODE_ENV=production, SQLite, synthetic lots). One request in flight at a time, so that a
 * request's time is the server's own plus the loopback, never a queue: blocks of REST searches and
 * of search_vin calls alternate (so that drift of a shared machine falls on both alike), each
 * block timed per request and by the server's CPU seconds (/proc). The overhead is the difference
 * of the medians (target: under 2 ms). See docs/benchmarks.md.
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

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC_FILE = path.join(REPO_ROOT, 'docs', 'benchmarks.md');
const HOST = '127.0.0.1';
const TARGET_OVERHEAD_MS = 2;

const USAGE = `usage: npm run bench:mcp -- [options]

  --lots N      synthetic lots to load (default 20000)
  --seed N      seed of the synthetic lots (default 1)
  --rounds N    rounds of one REST block and one MCP block (default 10)
  --block N     searches per block (default 300)
  --warmup N    searches of each kind before measuring, not counted (default 500)
  --write       write the figures into docs/benchmarks.md (otherwise only print them)
`;

class UsageError extends Error {}

const log = (message: string) => process.stderr.write(`${message}\n`);
const ms = (value: number) => value.toFixed(3);

const children: Child[] = [];
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

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const { values } = parseArgs({
    args: argv,
    options: {
      lots: { type: 'string', default: '20000' },
      seed: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '10' },
      block: { type: 'string', default: '300' },
      warmup: { type: 'string', default: '500' },
      write: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const settings = { lots: Number(values.lots), seed: Number(values.seed), rounds: Number(values.rounds), block: Number(values.block), warmup: Number(values.warmup) };
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
    // Alternate which kind goes first, so that neither always follows the other.
    const order: Kind[] = round % 2 === 0 ? ['rest', 'mcp'] : ['mcp', 'rest'];
    for (const kind of order) {
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
  const report = [
    `\`${command}\`, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'CPU'}, Node ${process.version}, ` +
      `${settings.lots.toLocaleString('en-US')} synthetic lots on SQLite, one request in flight:`,
    '',
    '| path | searches | p50 (ms) | p90 (ms) | p99 (ms) | server CPU per search (µs) |',
    '|---|---|---|---|---|---|',
    row('REST `POST /api/v1/search`', rest, 'rest'),
    row('MCP `search_vin` (`POST /mcp`)', mcp, 'mcp'),
    '',
    `Median overhead of search_vin over the REST search: **${ms(overhead)} ms** (target < ${TARGET_OVERHEAD_MS} ms: ${overhead < TARGET_OVERHEAD_MS ? 'met' : 'NOT met'}); ` +
      `server CPU ${cpu.mcp > 0 && cpu.rest > 0 ? `${(perCall('mcp') - perCall('rest')).toFixed(0)} µs more per search` : 'not measured (no /proc)'}.`,
  ].join('\n');
  process.stdout.write(`\n${report}\n`);
  if (values.write) {
    await replaceDocSection(DOC_FILE, 'mcp', '## MCP: `npm run bench:mcp`', report);
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
