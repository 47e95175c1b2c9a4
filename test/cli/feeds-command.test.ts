import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { age } from '../../src/operations/age.ts';
import { makeLot, validVin } from '../support/fixtures.ts';
import { makeDataDir, runCliInProcess } from './run-cli.ts';

/** `vinhistory feeds`: the commands as an operator runs them, against a local server (the pulls themselves: test/feeds/). */
describe('vinhistory feeds', () => {
  const data = makeDataDir();
  let server: Server;
  let url: string;
  let cookie: string | undefined;
  const env = { OUTBOUND_ALLOW_PRIVATE: 'true', FEED_CLI_COOKIE: 'sid=cli-secret' };
  const cli = (...args: string[]) => runCliInProcess(args, { dataDir: data.dir, env });

  beforeAll(async () => {
    const body = `${JSON.stringify(makeLot({ vin: validVin('1HGCM82633F00001') }))}\n`;
    server = createServer((request, response) => {
      cookie = request.headers.cookie;
      if (request.headers['if-none-match'] === '"1"') return response.writeHead(304).end();
      response.writeHead(200, { 'content-type': 'application/x-ndjson', etag: '"1"' }).end(body);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/lots.ndjson`;
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
    data.remove();
  });

  it('adds, lists (a table with ages, and the contract\'s JSON), runs, pauses, resumes and removes a feed; a header\'s env: value is sent and never shown', async () => {
    expect((await cli('feeds', 'list')).stdout).toContain('no feeds');
    const added = await cli('feeds', 'add', 'local', '--url', url, '--format', 'ndjson', '--every', '15m', '--header', 'Cookie: env:FEED_CLI_COOKIE');
    expect(added).toMatchObject({ code: 0 });
    expect(added.stdout).toContain('feed local added');
    expect((await cli('feeds', 'add', 'local', '--url', url)).code).toBe(1);
    expect((await cli('feeds', 'add', 'Bad Name', '--url', url)).code).toBe(2);

    const run = await cli('feeds', 'run', 'local');
    expect(run).toMatchObject({ code: 0 });
    expect(run.stdout).toContain('local: ok: read 1, inserted 1');
    expect(cookie).toBe('sid=cli-secret');
    const again = await cli('feeds', 'run', 'local');
    expect(again.stdout).toContain('not modified');

    const table = (await cli('feeds', 'list')).stdout;
    expect(table).toMatch(/^NAME +FORMAT +EVERY +STATUS +LAST ATTEMPT +LAST SUCCESS +NEXT RUN/);
    expect(table).toMatch(/local +ndjson +15m +not_modified +now +now +in 15 min/);
    const [json] = JSON.parse((await cli('feeds', 'list', '--json')).stdout) as Record<string, unknown>[];
    expect(Object.keys(json!)).toEqual(expect.arrayContaining(['name', 'url', 'format', 'every', 'paused', 'last_attempt_at', 'last_success_at', 'last_status', 'last_error', 'read', 'inserted', 'updated', 'unchanged', 'skipped', 'next_run_at']));
    expect(json).toMatchObject({ name: 'local', url, format: 'ndjson', every: '15m', paused: false, last_status: 'not_modified', last_error: null });
    expect(JSON.stringify(json)).not.toContain('cli-secret');

    expect((await cli('feeds', 'pause', 'local')).stdout).toContain('paused');
    expect((await cli('feeds', 'list')).stdout).toMatch(/local +ndjson +15m +paused/);
    expect((await cli('feeds', 'resume', 'local')).stdout).toContain('resumed');
    expect((await cli('feeds', 'remove', 'local')).code).toBe(0);
    expect((await cli('feeds', 'run', 'local'))).toMatchObject({ code: 1, stderr: expect.stringContaining('No feed is named local') });
  });

  it('says how long ago or how soon, as a person reads it', () => {
    const now = new Date('2026-11-20T10:00:00.000Z');
    expect(age(null, now)).toBe('never');
    expect(age('2026-11-20T09:58:00.000Z', now)).toBe('2 min ago');
    expect(age('2026-11-20T10:14:00.000Z', now)).toBe('in 14 min');
    expect(age('2026-11-20T07:00:00.000Z', now)).toBe('3 h ago');
    expect(age('2026-11-15T10:00:00.000Z', now)).toBe('5 d ago');
    expect(age('2026-11-20T10:00:02.000Z', now)).toBe('now');
  });
});
