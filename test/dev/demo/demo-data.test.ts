import { readFileSync } from 'node:fs';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LOT_FIELDS, type Lot } from '../../../src/domain/lot.ts';
import { checkVin } from '../../../src/domain/vin.ts';
import { DEMO_EMAIL, DEMO_HISTORY_VINS, DEMO_LOTS_FILE, DEMO_VIN, ensureDemoData } from '../../../src/dev/demo/first-run.ts';
import { describeFieldErrors, normaliseLot } from '../../../src/ingest/normalise-lot.ts';
import { createContainer, type Container } from '../../../src/container.ts';
import { MemoryRateLimiter } from '../../../src/limits/rate/memory-rate-limiter.ts';
import { testConfig, TEST_BASE_URL } from '../../support/app.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../support/databases.ts';
import { makeLot } from '../../support/fixtures.ts';

describe('the demo data set (demo/lots.ndjson)', () => {
  const lines = readFileSync(DEMO_LOTS_FILE, 'utf8').split('\n').filter((line) => line.trim() !== '');
  const raws = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  const lots: Lot[] = raws.map((raw, index) => {
    const result = normaliseLot(raw);
    if (!result.ok) throw new Error(`demo line ${index + 1}: ${describeFieldErrors(result.errors)}`);
    return result.lot;
  });

  it('is canonical: every line names every Lot field and is already in normalised form', () => {
    for (const [index, raw] of raws.entries()) {
      expect(Object.keys(raw), `line ${index + 1}`).toEqual(LOT_FIELDS);
      expect(lots[index], `line ${index + 1}`).toEqual(raw);
    }
  });

  it('holds 25-40 lots of about ten vehicles, every VIN valid, at Copart and IAAI', () => {
    expect(lots.length).toBeGreaterThanOrEqual(25);
    expect(lots.length).toBeLessThanOrEqual(40);
    const vins = new Set(lots.map((lot) => lot.vin));
    expect(vins.size).toBeGreaterThanOrEqual(10);
    for (const vin of vins) expect(checkVin(vin), vin).toEqual({ ok: true, vin });
    expect(new Set(lots.map((lot) => lot.auction))).toEqual(new Set(['copart', 'iaai']));
    expect(new Set(lots.map((lot) => `${lot.auction}/${lot.lot_id}`)).size).toBe(lots.length);
  });

  it('gives the advertised vehicles a history at both auctions', () => {
    for (const vin of DEMO_HISTORY_VINS) {
      const history = lots.filter((lot) => lot.vin === vin);
      expect(history.length, vin).toBeGreaterThanOrEqual(3);
      expect(new Set(history.map((lot) => lot.auction)), vin).toEqual(new Set(['copart', 'iaai']));
    }
  });

  it('carries the real GL450 lot of the Copart sales-data sample', () => {
    expect(lots.find((lot) => lot.vin === DEMO_VIN)).toMatchObject({
      auction: 'copart',
      lot_id: 26519090,
      year: 2010,
      brand: 'MERCEDES-BENZ',
      odometer: 172691,
      retail_value: 12563,
      document: 'SC - SALVAGE CERTIFICATE (CA)',
      highlight: 'Run & Drive Verified',
      primary_damage: 'SIDE',
      secondary_damage: 'REAR END',
      sale_date: null,
    });
  });
});

describe.each(DIALECTS)('ensureDemoData on %s', (dialect) => {
  let database: TestDatabase;
  let services: Container;
  let rateLimiter: MemoryRateLimiter;
  let output: string;
  const out = { write: (text: string) => (output += text) };
  const log = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
  const logger = log as unknown as FastifyBaseLogger;

  beforeEach(async () => {
    database = await createTestDatabase(dialect);
    rateLimiter = new MemoryRateLimiter();
    services = createContainer({ config: testConfig(), db: database.db, log: pino({ level: 'silent' }), rateLimiter });
    output = '';
    log.info.mockClear();
    log.warn.mockClear();
    log.error.mockClear();
  });
  afterEach(async () => {
    await services.close();
    await rateLimiter.close();
    await database.destroy();
  });

  it('loads the demo lots into an empty database, makes the demo account and token, and prints how to use them', async () => {
    const setup = await ensureDemoData({ config: testConfig(), services, log: logger, out });
    expect(setup).not.toBeNull();
    const expectedLots = readFileSync(DEMO_LOTS_FILE, 'utf8').trim().split('\n').length;
    expect(setup!.summary).toEqual({ read: expectedLots, inserted: expectedLots, updated: 0, unchanged: 0, skipped: 0 });
    expect(await database.repos.lots.count()).toBe(expectedLots);

    const principal = await database.repos.tokens.authenticate(setup!.token);
    const account = await database.repos.accounts.findByEmail(DEMO_EMAIL);
    expect(principal?.accountId).toBe(account!.id);
    expect(principal?.subscription?.planCode).toBe('standard');

    expect(setup!.token).toMatch(/^vh_live_[0-9A-Za-z]{32}$/);
    expect(output).toContain(`curl -H "Authorization: ${setup!.token}" "${TEST_BASE_URL}/api/v1/search?vin=${DEMO_VIN}"`);
    // Tokens are never logged: only the terminal banner shows it.
    expect(JSON.stringify([log.info.mock.calls, log.warn.mock.calls])).not.toContain(setup!.token);
    expect(log.warn).not.toHaveBeenCalled();
  });

  it('does nothing the second time, nor on a database that already holds lots', async () => {
    await ensureDemoData({ config: testConfig(), services, log: logger, out });
    output = '';
    expect(await ensureDemoData({ config: testConfig(), services, log: logger, out })).toBeNull();
    expect(output).toBe('');
    expect(await database.repos.tokens.listForAccount((await database.repos.accounts.findByEmail(DEMO_EMAIL))!.id)).toHaveLength(1);
  });

  it('leaves an operator-loaded database alone', async () => {
    await database.repos.lots.upsertBatch([makeLot({ vin: '4JGBF7BE5AA585531', lot_id: 1 })]);
    expect(await ensureDemoData({ config: testConfig(), services, log: logger, out })).toBeNull();
    expect(await database.repos.lots.count()).toBe(1);
    expect(await database.repos.accounts.findByEmail(DEMO_EMAIL)).toBeUndefined();
  });

  it('never runs in production', async () => {
    const config = testConfig({ NODE_ENV: 'production' });
    expect(await ensureDemoData({ config, services, log: logger, out })).toBeNull();
    expect(await database.repos.lots.count()).toBe(0);
    expect(await database.repos.accounts.findByEmail(DEMO_EMAIL)).toBeUndefined();
    expect(output).toBe('');
  });

  it('starts without demo data, and says why, when the demo file cannot be read', async () => {
    const setup = await ensureDemoData({ config: testConfig(), services, log: logger, out, demoFile: '/nonexistent/lots.ndjson' });
    expect(setup).toBeNull();
    expect(log.error).toHaveBeenCalledWith(
      expect.objectContaining({ file: '/nonexistent/lots.ndjson' }),
      'demo data: cannot read the demo file; starting without demo data',
    );
    expect(await database.repos.accounts.findByEmail(DEMO_EMAIL)).toBeUndefined();
    expect(output).toBe('');
  });

  it('re-uses an existing demo account and gives it a subscription when it has none', async () => {
    await database.repos.accounts.create(DEMO_EMAIL);
    const setup = await ensureDemoData({ config: testConfig(), services, log: logger, out });
    const principal = await database.repos.tokens.authenticate(setup!.token);
    expect(principal?.subscription?.planCode).toBe('standard');
  });
});
