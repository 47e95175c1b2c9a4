import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createTestApp, TEST_BASE_URL, type TestApp } from '../support/app.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../support/fixtures.ts';
import { SANDBOX_CATALOGUE } from '../../src/search/sandbox/catalogue.ts';

/**
 * The MCP server at /mcp through the SDK's own client and its Streamable HTTP transport, whose
 * fetch is the app's inject(): no socket. SQLite only: the tools call the services the routes call,
 * and nothing of the MCP side differs between the databases (the services' own suites run on both).
 */
const MCP_URL = new URL(`${TEST_BASE_URL}/mcp`);
const VIN = validVin('1HGCM82633A10435');
const UNKNOWN_VIN = validVin('1HGCM82633A10499');
const SANDBOX_VIN = '4T1BF1FK7FU900011';

describe('the MCP server at /mcp (sqlite)', () => {
  let t: TestApp;
  const lot = makeLot({ vin: VIN, auction: 'copart', lot_id: 61000001, sale_date: '2024-03-01T00:00:00.000Z', price: 5200, primary_damage: 'FRONT END', name: '2003 HONDA ACCORD EX' });

  beforeAll(async () => {
    t = await createTestApp('sqlite');
    await t.repos.lots.upsertBatch([lot, makeLot({ vin: VIN, auction: 'iaai', lot_id: 61000002, sale_date: '2023-01-01T00:00:00.000Z' })]);
  });
  afterAll(async () => t?.close());

  /** The SDK client's fetch, answered by inject(). */
  const injectFetch: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const sent: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => (sent[name] = value));
    const res = await t.app.inject({
      method: (init?.method ?? 'GET') as 'GET',
      url: url.pathname + url.search,
      headers: sent,
      ...(typeof init?.body === 'string' ? { payload: init.body } : {}),
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers.set(name, String(value));
    return new Response([202, 204].includes(res.statusCode) ? null : res.body, { status: res.statusCode, headers });
  };

  async function connect(token: string): Promise<Client> {
    const client = new Client({ name: 'vinhistory-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(MCP_URL, { fetch: injectFetch, requestInit: { headers: { authorization: token } } }));
    return client;
  }
  const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  /** The first text block: the summary of a result, the API's message of a tool error. */
  const text = (result: CallToolResult) => (result.content[0]?.type === 'text' ? result.content[0].text : '');
  const used = async (c: Customer) => (await t.app.services.usage.forAccount(c.accountId))?.used;
  const rest = (token: string, url: string) => t.app.inject({ url, headers: { authorization: token } });

  it('lists exactly the tools, each with a description, an input schema and an output schema, on the current protocol revision', async () => {
    const c = await createCustomer(t.repos);
    const client = await connect(c.token);
    expect(client.getServerVersion()?.name).toBe('vinhistory');
    expect(client.getInstructions()).toContain('counted');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['search_vin', 'lookup_lot', 'search_lots', 'market_value', 'lot_history', 'get_usage', 'list_watches', 'watch', 'unwatch']);
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(80);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
    }
    expect(tools[0]!.inputSchema.required).toEqual(['vin']);
    await client.close();
    const init = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { authorization: c.token, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      payload: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
    });
    expect(init.statusCode).toBe(200);
    expect(init.json().result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    // Stateless: no session for a load balancer to pin.
    expect(init.headers['mcp-session-id']).toBeUndefined();
  });

  it('search_vin answers the API\'s report, counted as one search like a REST search; a 404 counts, a malformed VIN does not', async () => {
    const c = await createCustomer(t.repos, { quota: 100, rate: 100 });
    const client = await connect(c.token);
    const result = await call(client, 'search_vin', { vin: VIN.toLowerCase() });
    expect(result.isError).toBeFalsy();
    const report = result.structuredContent as { vin: string; lots: { lot_id: number }[]; report_url: string };
    const viaRest = (await rest(c.token, `/api/v1/search?vin=${VIN}`)).json();
    expect(Object.keys(report)).toEqual(Object.keys(viaRest));
    expect(report.lots).toEqual(viaRest.lots);
    expect(report.vin).toBe(VIN);
    expect(report.report_url.startsWith(`${TEST_BASE_URL}/report/`)).toBe(true);
    expect(JSON.parse(result.content[1]!.type === 'text' ? result.content[1]!.text : '')).toEqual(report);
    expect(text(result)).toContain(`VIN ${VIN}: 2 auction lots on record (copart, iaai)`);
    expect(text(result)).toContain('copart lot 61000001, 2003 HONDA ACCORD EX, sale date 2024-03-01, price $5,200, primary damage FRONT END');
    expect(text(result)).toContain('Counted as one search');
    expect(await used(c)).toBe(2);

    const missing = await call(client, 'search_vin', { vin: UNKNOWN_VIN });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toBe(`No auction records were found for VIN ${UNKNOWN_VIN}.`);
    expect(missing.structuredContent).toEqual({ status: 404, code: 'no_records', message: `No auction records were found for VIN ${UNKNOWN_VIN}.` });
    expect(await used(c)).toBe(3);

    const malformed = await call(client, 'search_vin', { vin: 'NOT-A-VIN' });
    expect(malformed.isError).toBe(true);
    const viaRestMalformed = (await rest(c.token, '/api/v1/search?vin=NOT-A-VIN')).json();
    expect(malformed.structuredContent).toEqual({ status: 422, ...viaRestMalformed });
    expect(await used(c)).toBe(3);
    expect(await t.repos.searches.countForAccount(c.accountId)).toBe(3);
    await client.close();
  });

  it('lookup_lot answers the report of the lot\'s vehicle and counts; an idempotency key repeats it uncounted', async () => {
    const c = await createCustomer(t.repos, { quota: 100, rate: 100 });
    const client = await connect(c.token);
    const first = await call(client, 'lookup_lot', { auction: 'copart', lot_id: lot.lot_id, idempotency_key: 'agent-1' });
    expect(first.isError).toBeFalsy();
    expect((first.structuredContent as { lots: unknown[] }).lots).toHaveLength(2);
    const again = await call(client, 'lookup_lot', { auction: 'copart', lot_id: lot.lot_id, idempotency_key: 'agent-1' });
    expect(again.structuredContent).toEqual(first.structuredContent);
    expect(text(again)).toContain('not counted again');
    expect(await used(c)).toBe(1);
    const unknownAuction = await call(client, 'lookup_lot', { auction: 'nowhere', lot_id: 1 });
    expect(unknownAuction.structuredContent).toMatchObject({ status: 422, code: 'invalid_request', errors: { auction: [expect.stringContaining('copart')] } });
    expect(await used(c)).toBe(1);
    await client.close();
  });

  it('search_lots and market_value answer their endpoints\' JSON, each counted as one call; a bad argument is the API\'s 422, a sandbox token its 403', async () => {
    const day = 86_400_000;
    const soldAt = (days: number) => new Date(Date.now() - days * day).toISOString();
    await t.repos.lots.upsertBatch([
      makeLot({ vin: validVin('1HGCV1F30LA00201'), brand: 'HONDA', model: 'ACCORD', year: 2020, name: '2020 HONDA ACCORD', primary_damage: 'FRONT END', price: 4000, retail_value: 20_000, sale_date: soldAt(30) }),
      makeLot({ vin: validVin('1HGCV1F30LA00202'), brand: 'Honda', model: 'Accord', year: 2021, name: '2021 HONDA ACCORD', primary_damage: 'FRONT END', price: 6000, retail_value: 20_000, sale_date: soldAt(60) }),
    ]);
    const c = await createCustomer(t.repos, { quota: 100, rate: 100 });
    const client = await connect(c.token);

    const page = await call(client, 'search_lots', { make: 'honda', model: 'accord', year_min: 2020, sort: 'price_asc', limit: 1 });
    expect(page.isError).toBeFalsy();
    expect(page.structuredContent).toEqual((await rest(c.token, '/api/v1/lots?make=honda&model=accord&year_min=2020&sort=price_asc&limit=1')).json());
    const next = (page.structuredContent as { next_cursor: string }).next_cursor;
    expect(text(page)).toBe(`1 lot on this page: copart lot ${(page.structuredContent as { lots: { lot_id: number }[] }).lots[0]!.lot_id}, 2020 HONDA ACCORD, sale date ${soldAt(30).slice(0, 10)}, $4,000. More follow: call again with the same arguments and cursor ${next} (another counted call). Counted as one call against the monthly quota.`);
    expect(await used(c)).toBe(2);
    const badYear = await call(client, 'search_lots', { year_min: 1700 });
    expect(badYear.structuredContent).toMatchObject({ status: 422, code: 'invalid_request', errors: { year_min: [expect.any(String)] } });
    expect(await used(c)).toBe(2);

    const value = await call(client, 'market_value', { make: 'HONDA', model: 'ACCORD', year: 2020 });
    expect(value.isError).toBeFalsy();
    const viaRest = (await rest(c.token, '/api/v1/market?make=HONDA&model=ACCORD&year=2020')).json();
    // The window ends now: the two calls differ by the milliseconds between them.
    expect({ ...(value.structuredContent as object), window: viaRest.window }).toEqual(viaRest);
    expect(text(value)).toMatch(/^2020 HONDA ACCORD, sales from \S+ to \S+: 2 comparable sales, median \$5,000 \(p25 \$4,500, p75 \$5,500; from \$4,000 to \$6,000\), a median 0\.25 of retail value\. Most common damage: FRONT END \(2, median \$5,000\)\. Counted as one call against the monthly quota\.$/);
    expect(await used(c)).toBe(4);
    const neither = await call(client, 'market_value', { months: 6 });
    expect(neither.structuredContent).toMatchObject({ status: 422, code: 'invalid_request' });
    await client.close();

    const { token } = await t.repos.tokens.create(c.accountId, 'sandbox', new Date(), 'test');
    const sandbox = await connect(token);
    for (const [name, args] of [['search_lots', { make: 'HONDA' }], ['market_value', { year: 1700 }]] as const) {
      const refused = await call(sandbox, name, args);
      expect(refused.structuredContent).toMatchObject({ status: 403, code: 'live_token_required', message: expect.stringContaining('cannot search the catalogue or value the market') });
    }
    expect(await used(c)).toBe(4);
    await sandbox.close();
  });

  it('lot_history answers the endpoint\'s history, counted as that call; an unknown lot is a counted 404', async () => {
    const c = await createCustomer(t.repos, { quota: 100, rate: 100 });
    const historyLot = makeLot({ vin: VIN, auction: 'copart', lot_id: 61000003, price: 4000 });
    await t.repos.lots.upsertBatch([historyLot], { now: new Date('2026-11-03T10:00:00.000Z'), source: 'copart-2026-11-03.csv' });
    await t.repos.lots.upsertBatch([{ ...historyLot, price: 3500 }], { now: new Date('2026-11-10T10:00:00.000Z'), source: 'copart-feed' });
    const client = await connect(c.token);
    const result = await call(client, 'lot_history', { auction: 'copart', lot_id: 61000003 });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual((await rest(c.token, '/api/v1/lots/copart/61000003/history')).json());
    expect(text(result)).toBe(
      `copart lot 61000003 (VIN ${VIN}): first seen 2026-11-03T10:00:00.000Z, last seen 2026-11-10T10:00:00.000Z, 2 versions. ` +
        'Latest change 2026-11-10T10:00:00.000Z from copart-feed: price 4000 → 3500. Counted as one call against the monthly quota. Every version, field by field, is in the structured content.',
    );
    expect(await used(c)).toBe(2);
    const missing = await call(client, 'lot_history', { auction: 'copart', lot_id: 69999999 });
    expect(missing.structuredContent).toMatchObject({ status: 404, code: 'no_records' });
    expect(await used(c)).toBe(3);
    await client.close();
  });

  it('answers the API\'s 429s as tool errors with retry_after: the plan\'s rate, then its quota', async () => {
    const c = await createCustomer(t.repos, { quota: 100, rate: 1 });
    const client = await connect(c.token);
    expect((await call(client, 'search_vin', { vin: VIN })).isError).toBeFalsy();
    const limited = await call(client, 'search_vin', { vin: VIN });
    expect(limited.isError).toBe(true);
    expect(limited.structuredContent).toMatchObject({ status: 429, code: 'rate_limited', retry_after: 1 });
    expect(text(limited)).toBe('Rate limit exceeded: your plan allows 1 searches per second. Retry after the Retry-After delay.');
    await client.close();

    const small = await createCustomer(t.repos, { quota: 1, rate: 100 });
    const second = await connect(small.token);
    expect((await call(second, 'search_vin', { vin: VIN })).isError).toBeFalsy();
    const over = await call(second, 'search_vin', { vin: VIN });
    expect(over.structuredContent).toMatchObject({ status: 429, code: 'quota_exceeded', message: expect.stringMatching(/^Monthly quota exceeded: your plan includes 1 searches/) });
    expect((over.structuredContent as { retry_after: number }).retry_after).toBeGreaterThan(0);
    expect(await used(small)).toBe(1);
    await second.close();
  });

  it('get_usage, watch, list_watches and unwatch answer what their API operations answer, and count nothing', async () => {
    const c = await createCustomer(t.repos);
    const client = await connect(c.token);
    const usage = await call(client, 'get_usage');
    expect(usage.structuredContent).toEqual((await rest(c.token, '/api/v1/usage')).json());
    expect(text(usage)).toMatch(/^Plan Standard \(monthly\): 0 searches used of 1,000 in the billing period that started \S+; 1,000 searches remaining until the quota resets at \S+, at most 2 per second\.$/);

    const created = await call(client, 'watch', { vin: VIN });
    const watch = created.structuredContent as { id: string; vin: string };
    expect(watch).toMatchObject({ vin: VIN, auction: null, lot_id: null });
    expect(text(created)).toContain(`Now watching VIN ${VIN}`);
    const existing = await call(client, 'watch', { vin: VIN });
    expect(existing.structuredContent).toEqual(watch);
    expect(text(existing)).toContain('already watched');
    const lotWatch = (await call(client, 'watch', { auction: 'copart', lot_id: 61000001 })).structuredContent as { id: string };
    expect(lotWatch).toMatchObject({ vin: null, auction: 'copart', lot_id: 61000001 });
    const both = await call(client, 'watch', { vin: VIN, auction: 'copart', lot_id: 1 });
    expect(both.structuredContent).toMatchObject({ status: 422, code: 'invalid_request' });

    expect(text(await call(client, 'list_watches'))).toBe(`2 watches: copart lot 61000001 (${lotWatch.id}); VIN ${VIN} (${watch.id}). This is the last page.`);
    const page = await call(client, 'list_watches', { limit: 1 });
    expect(page.structuredContent).toEqual((await rest(c.token, '/api/v1/watches?limit=1')).json());
    expect((page.structuredContent as { next_cursor: string | null }).next_cursor).not.toBeNull();
    const badCursor = await call(client, 'list_watches', { cursor: 'bm90LW91cnM' });
    expect(badCursor.structuredContent).toMatchObject({ status: 422, errors: { cursor: ['The cursor is not one this API gave; start again without it.'] } });

    expect((await call(client, 'unwatch', { id: watch.id })).structuredContent).toEqual({ id: watch.id, removed: true });
    const gone = await call(client, 'unwatch', { id: watch.id });
    expect(gone.isError).toBe(true);
    expect(text(gone)).toBe('You have no watch with that id.');
    expect(gone.structuredContent).toMatchObject({ status: 404, code: 'not_found' });
    expect(await used(c)).toBe(0);
    await client.close();
  });

  it('refuses bad arguments as tool errors naming the argument, and an unknown tool as a protocol error', async () => {
    const c = await createCustomer(t.repos);
    const client = await connect(c.token);
    const missing = await call(client, 'search_vin', {});
    expect(missing.structuredContent).toEqual({ status: 422, code: 'invalid_request', message: 'The vin field is required.', errors: { vin: ['The vin field is required.'] } });
    const wrongType = await call(client, 'lookup_lot', { auction: 'copart', lot_id: 'twelve' });
    expect(wrongType.structuredContent).toMatchObject({ status: 422, errors: { lot_id: ['The lot_id must be of type integer.'] } });
    const extra = await call(client, 'get_usage', { verbose: true });
    expect(extra.structuredContent).toMatchObject({ status: 422, errors: { verbose: ['The verbose argument is not one this tool takes.'] } });
    await expect(call(client, 'search_everything')).rejects.toThrow(/There is no tool "search_everything"/);
    expect(await used(c)).toBe(0);
    await client.close();
  });

  it('a sandbox token searches the sandbox catalogue uncounted, and may not use watches (the API\'s 403)', async () => {
    const c = await createCustomer(t.repos, { quota: 10, rate: 10 });
    const { token } = await t.repos.tokens.create(c.accountId, 'sandbox', new Date(), 'test');
    const client = await connect(token);
    const found = await call(client, 'search_vin', { vin: SANDBOX_VIN });
    expect((found.structuredContent as { lots: unknown[] }).lots).toEqual(SANDBOX_CATALOGUE.find((vehicle) => vehicle.vin === SANDBOX_VIN)!.lots);
    expect(text(found)).toContain('Sandbox token');
    const live = await call(client, 'search_vin', { vin: VIN });
    expect(live.structuredContent).toMatchObject({ status: 404, code: 'no_records' });
    const history = await call(client, 'lot_history', { auction: 'copart', lot_id: 90000011 });
    expect(history.structuredContent).toMatchObject({ auction: 'copart', lot_id: 90000011, vin: SANDBOX_VIN });
    expect(text(history)).toContain('Sandbox token');
    const watches = await call(client, 'list_watches');
    expect(watches.isError).toBe(true);
    expect(watches.structuredContent).toMatchObject({ status: 403, code: 'live_token_required' });
    expect(await used(c)).toBe(0);
    await client.close();
  });

  it('a token without a plan in force: searches are the API\'s 402, watches answer as the API does', async () => {
    const c = await createCustomer(t.repos);
    await t.repos.subscriptions.cancelActive(c.accountId);
    const client = await connect(c.token);
    const refused = await call(client, 'search_vin', { vin: VIN });
    expect(refused.structuredContent).toMatchObject({ status: 402, code: 'subscription_required' });
    expect((await call(client, 'list_watches')).structuredContent).toEqual({ data: [], next_cursor: null });
    expect((await call(client, 'watch', { vin: VIN })).structuredContent).toMatchObject({ status: 409, code: 'watch_limit_reached' });
    await client.close();
  });

  it('a missing, unknown or revoked token is HTTP 401 on the transport with the API\'s exact body, even when this process cached it', async () => {
    const post = (headers: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      });
    for (const headers of [{}, { authorization: 'vh_live_unknown' }] as Record<string, string>[]) {
      const res = await post(headers);
      expect(res.statusCode).toBe(401);
      expect(res.body).toBe('{"message":"Unauthenticated."}');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="vinhistory"/);
    }
    const unauthenticated = { code: 401, message: expect.stringContaining('{"message":"Unauthenticated."}') };
    await expect(connect('vh_live_unknown')).rejects.toMatchObject(unauthenticated);

    const c = await createCustomer(t.repos, { quota: 100, rate: 100 });
    const client = await connect(c.token);
    expect((await call(client, 'search_vin', { vin: VIN })).isError).toBeFalsy();
    // Revoked as the CLI does, in the database: this process's cache still holds the principal.
    await t.repos.tokens.revokeByToken(c.token);
    await expect(call(client, 'search_vin', { vin: VIN })).rejects.toMatchObject(unauthenticated);
    await expect(call(client, 'get_usage')).rejects.toMatchObject(unauthenticated);
    expect((await post({ authorization: c.token })).body).toBe('{"message":"Unauthenticated."}');
    expect(await used(c)).toBe(1);
    await client.close();
  });

  it('a fault is a JSON-RPC error naming the request id and nothing of the fault; a busy database is the API\'s 503 as a tool error', async () => {
    const c = await createCustomer(t.repos);
    const client = await connect(c.token);
    const { search } = t.app.services;
    const original = search.search.bind(search);
    try {
      search.search = async () => {
        throw new Error('SECRET internal detail');
      };
      const fault = await call(client, 'search_vin', { vin: VIN }).catch((error: Error) => error);
      expect(fault).toBeInstanceOf(Error);
      expect((fault as Error).message).toMatch(/Internal error\. If it persists, contact support quoting request id \S+/);
      expect((fault as Error).message).not.toContain('SECRET');
      search.search = async () => {
        throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
      };
      const busy = await call(client, 'search_vin', { vin: VIN });
      expect(busy.structuredContent).toEqual({ status: 503, code: 'service_busy', message: 'The service is busy; try again in a moment.', retry_after: 1 });
    } finally {
      search.search = original;
    }
    await client.close();
  });

  it('keeps the Streamable HTTP rules of revision 2025-11-25: Accept, Content-Type, protocol version, Origin, 202 for notifications, one answer per request', async () => {
    const c = await createCustomer(t.repos);
    const ACCEPT = 'application/json, text/event-stream';
    const post = (payload: unknown, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'POST', url: '/mcp', headers: { authorization: c.token, accept: ACCEPT, 'content-type': 'application/json', ...headers }, payload: JSON.stringify(payload) });
    const ping = (id: number | string) => ({ jsonrpc: '2.0', id, method: 'ping' });
    const refusedWith = (res: Awaited<ReturnType<typeof post>>, status: number, code: number, message: RegExp) => {
      expect(res.statusCode).toBe(status);
      expect(res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code, message: expect.stringMatching(message) } });
    };

    const answered = await post(ping(7), { 'mcp-protocol-version': LATEST_PROTOCOL_VERSION });
    expect(answered.statusCode).toBe(200);
    expect(answered.headers['content-type']).toMatch(/^application\/json/);
    expect(answered.json()).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
    // JSON for programs, as the API's answers: nosniff, none of the page headers (CSP...).
    expect(answered.headers['x-content-type-options']).toBe('nosniff');
    expect(answered.headers['content-security-policy']).toBeUndefined();
    // Without the version header: a client of a revision before 2025-06-18, answered all the same.
    expect((await post(ping('a'))).json()).toEqual({ jsonrpc: '2.0', id: 'a', result: {} });

    refusedWith(await post(ping(1), { accept: 'application/json' }), 406, -32000, /must accept both application\/json and text\/event-stream/);
    refusedWith(await post(ping(1), { 'mcp-protocol-version': '1900-01-01' }), 400, -32000, /Unsupported protocol version: 1900-01-01/);
    refusedWith(await post(ping(1), { origin: 'https://evil.example' }), 403, -32000, /Origin/);
    expect((await post(ping(1), { origin: TEST_BASE_URL })).statusCode).toBe(200);
    refusedWith(await post({ jsonrpc: '2.0', id: {}, method: 'ping' }), 400, -32700, /Invalid JSON-RPC message/);
    const textBody = await t.app.inject({ method: 'POST', url: '/mcp', headers: { authorization: c.token, accept: ACCEPT, 'content-type': 'text/plain' }, payload: JSON.stringify(ping(1)) });
    expect(textBody.statusCode).toBe(415);

    // A notification (or a response) alone: accepted, no body. A cancellation is accepted and ignored.
    for (const message of [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
      { jsonrpc: '2.0', id: 3, result: {} },
    ]) {
      const accepted = await post(message);
      expect(accepted.statusCode).toBe(202);
      expect(accepted.body).toBe('');
    }
    // A batch: one answer per request, in order, as an array; its notifications answer nothing.
    const batch = await post([ping(1), { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { jsonrpc: '2.0', id: 3, method: 'no/such' }]);
    expect(batch.statusCode).toBe(200);
    const answers = batch.json<{ id: number; result?: { tools?: unknown[] }; error?: { code: number } }[]>();
    expect(answers.map((answer) => answer.id)).toEqual([1, 2, 3]);
    expect(answers[1]!.result!.tools).toHaveLength(9);
    expect(answers[2]!.error!.code).toBe(-32601);
    refusedWith(await post([ping(1), ping(1)]), 400, -32600, /unique/);
    const init = { jsonrpc: '2.0', id: 9, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    refusedWith(await post([init, ping(1)]), 400, -32600, /Only one initialization request/);
  });

  it('GET and DELETE /mcp are 405 with Allow: POST (no sessions, no stream)', async () => {
    const c = await createCustomer(t.repos);
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await t.app.inject({ method, url: '/mcp', headers: { authorization: c.token } });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.json().code).toBe('method_not_allowed');
    }
  });
});
