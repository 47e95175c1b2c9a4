import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { DIALECTS } from '../../support/databases.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../support/fixtures.ts';

/** The report page's history of a lot (src/web/report/history.ts): as it stood when the report was made. */
describe.each(DIALECTS)('the history on the report page (%s)', (dialect) => {
  let t: TestApp;
  let customer: Customer;
  const vin = validVin('1FTFW1ET5DFC3939');
  const lot = makeLot({ vin, auction: 'copart', lot_id: 53900001, price: 4000, odometer: 81000, document: 'SC - SALVAGE CERTIFICATE (CA)', sale_date: '2026-11-05T17:00:00.000Z' });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    customer = await createCustomer(t.repos, { quota: 100, rate: 100 });
  });
  afterAll(async () => t?.close());

  const search = async () => {
    const res = await t.app.inject({ url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } });
    expect(res.statusCode).toBe(200);
    return { path: new URL(res.json().report_url).pathname, at: Date.parse(res.json().origin_timestamp) };
  };
  /** Until the clock has passed a moment: a later import is then after the report, whatever the clock's resolution. */
  const after = async (time: number) => {
    while (Date.now() <= time) await new Promise((resolve) => setImmediate(resolve));
  };

  it('shows each lot\'s changes, sources and sightings; a report made before a change keeps the old history', async () => {
    await t.repos.lots.upsertBatch([lot], { now: new Date('2026-11-03T10:00:00.000Z'), source: 'copart-2026-11-03.csv' });
    const before = await search();
    await after(before.at);
    // The sale went by without a sale: a later date, a lower price, the odometer and the title rewritten.
    await t.repos.lots.upsertBatch([{ ...lot, price: 3500, odometer: 61000, document: 'CT - CERTIFICATE OF TITLE', sale_date: '2026-12-01T17:00:00.000Z' }], { source: 'copart-feed' });
    const later = await search();

    const old = (await t.app.inject({ url: before.path })).body;
    expect(old).toContain('class="lot-history"');
    expect(old).toContain('From copart-2026-11-03.csv, seen Nov 3, 2026 – Nov 3, 2026');
    expect(old).toContain('No changes since it was first seen.');
    expect(old).not.toContain('copart-feed');
    expect(old).not.toContain('Title washed');

    const page = (await t.app.inject({ url: later.path })).body;
    expect(page).toContain('From copart-2026-11-03.csv, copart-feed, seen Nov 3, 2026 –');
    expect(page).toContain('Sale price: $4,000 → $3,500');
    expect(page).toMatch(/Odometer: 81,000 mi → 61,000 mi/);
    expect(page).toContain('Title washed: salvage in an earlier version, clean in a later one');
    expect(page).toContain('Odometer reading changed between versions of the same lot');
    expect(page).toContain('Put up again after a run without a sale');

    // In another language, the same history in its words.
    const russian = (await t.app.inject({ url: `${later.path}?lang=ru` })).body;
    expect(russian).toContain('История лота');
    expect(russian).toContain('Показания одометра менялись между версиями одного лота');
  });

  it('cuts a report\'s history at the versions it named, not by time: a change stored in the same millisecond is after it', async () => {
    const same = makeLot({ vin, auction: 'copart', lot_id: 53900003, price: 7000, primary_damage: 'FRONT END' });
    await t.repos.lots.upsertBatch([same], { source: 'copart-feed' });
    const report = await search();
    // Observed at the report's own millisecond, as a fast import right after a search can be.
    await t.repos.lots.upsertBatch([{ ...same, price: 99999, primary_damage: 'ROLLOVER' }], { now: new Date(report.at), source: 'copart-feed' });
    const page = (await t.app.inject({ url: report.path })).body;
    expect(page).toContain('$7,000');
    expect(page).not.toContain('$99,999');
    expect(page).not.toContain('Rollover');
    const fresh = (await t.app.inject({ url: (await search()).path })).body;
    expect(fresh).toContain('Sale price: $7,000 → $99,999');
  });

  it('shows a lot leaving its auction\'s listing', async () => {
    const other = makeLot({ vin, auction: 'iaai', lot_id: 53900002, price: 2000 });
    await t.repos.lots.upsertBatch([other], { source: 'iaai-feed' });
    await t.repos.lotHistory.recordListing([{ auction: 'iaai', lotId: 53900002 }], 'left', { source: 'iaai-feed' });
    const page = (await t.app.inject({ url: (await search()).path })).body;
    expect(page).toContain("Left the auction&#39;s listing");
  });
});
