import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { sql } from 'kysely';
import { namedLotJson, type LotNowAndVersions, type NamedLot } from '../../src/history/report-snapshot.ts';
import type { LotChanges } from '../../src/domain/lot-history.ts';
import type { Lot } from '../../src/domain/lot.ts';
import { lotFromRow } from '../../src/storage/lot-rows.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { DIALECTS } from '../support/databases.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../support/fixtures.ts';

/**
 * The snapshot that names versions (src/history/report-snapshot.ts) against the copying one the
 * service stores: for reports made between imports that change their lots, the lots rebuilt from
 * the names are the very bytes the report stored, and so the bytes its JSON is signed over.
 */
describe.each(DIALECTS)('a report snapshot that names versions (%s)', (dialect) => {
  let t: TestApp;
  let customer: Customer;
  const vin = validVin('5YJSA1E26HF20001');
  // Text a JSON writer may print in more than one way: quotes, a backslash, control characters, non-ASCII.
  const awkward = 'Quote " back\\slash \t tab \n newline \u0001 \u001f \u007f é 漢 😀 \u2028';
  const first = makeLot({ vin, auction: 'copart', price: 4000, odometer: 81000, highlight: awkward, sale_date: '2026-11-05T17:00:00.000Z', images: ['https://img.example/a.jpg'] });
  const second = makeLot({ vin, auction: 'iaai', price: 2000, sale_date: '2026-10-01T17:00:00.000Z' });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    customer = await createCustomer(t.repos, { quota: 100, rate: 100 });
  });
  afterAll(async () => t?.close());

  /** Each lot's versions as appended: SQLite's rowid is the order of insertion; this test's imports have distinct moments on PostgreSQL. */
  const stored = async (auction: string, lotId: number): Promise<LotNowAndVersions & { count: number }> => {
    const row = await t.db.kysely.selectFrom('lots').selectAll().where('auction', '=', auction).where('lot_id', '=', lotId).executeTakeFirstOrThrow();
    const order = dialect === 'sqlite' ? sql`rowid` : sql`observed_at`;
    const { rows } = await sql<{ changed: string }>`select changed from lot_versions where auction = ${auction} and lot_id = ${lotId} order by ${order}`.execute(t.db.kysely);
    return { lot: lotFromRow(row), changes: rows.map((r) => JSON.parse(r.changed) as LotChanges), count: rows.length };
  };

  /** A search, and what a named snapshot would have stored for it: each lot shown, with its count of versions then. */
  const search = async () => {
    const res = await t.app.inject({ url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } });
    expect(res.statusCode).toBe(200);
    const body = res.json<{ report_url: string; lots: Lot[] }>();
    const named: NamedLot[] = [];
    for (const lot of body.lots) named.push({ auction: lot.auction, lot_id: lot.lot_id, versions: (await stored(lot.auction, lot.lot_id)).count });
    return { id: new URL(body.report_url).pathname.split('/').at(-1)!, named };
  };

  let moment = Date.parse('2026-11-03T10:00:00.000Z');
  const importAt = (lots: (Lot & { derived?: Partial<Lot> })[]) => t.repos.lots.upsertBatch(lots, { now: new Date((moment += 60_000)), source: 'feed' });

  it('rebuilds every report, made between imports, byte for byte, and its signed JSON verifies', async () => {
    await importAt([first, second]);
    const reports = [await search()];
    await importAt([{ ...first, price: 3500, odometer: 61000, highlight: `${awkward} again`, images: ['https://img.example/b.jpg', 'https://img.example/c.jpg'] }]);
    reports.push(await search());
    // A derived value fills what is unknown; a thinner line leaves the rest; a listing change touches no field.
    await importAt([{ ...second, price: null, derived: { fuel: 'GAS', color: 'RED' } }]);
    await t.repos.lotHistory.recordListing([{ auction: 'iaai', lotId: second.lot_id }], 'left', { now: new Date((moment += 60_000)), source: 'feed' });
    reports.push(await search());
    await importAt([{ ...second, price: 2500, sale_date: '2026-12-01T17:00:00.000Z' }, { ...first, document: 'CT - CERTIFICATE OF TITLE', highlight: 'plain' }]);
    reports.push(await search());
    await importAt([{ ...first, price: 1, images: ['https://img.example/d.jpg'] }]);

    for (const report of reports) {
      const copied = await t.repos.reports.lotsJsonOf(report.id);
      const now = await Promise.all(report.named.map((named) => stored(named.auction, named.lot_id)));
      const rebuilt = `[${report.named.map((named, i) => namedLotJson(named, now[i]!)).join(',')}]`;
      expect(rebuilt).toBe(copied);

      const signed = (await t.app.inject({ url: `/report/${report.id}.json` })).json<{ signature: string }>();
      // Fetched after the signing: the first signature makes the service's first key.
      const jwks = (await t.app.inject({ url: '/.well-known/jwks.json' })).json<JSONWebKeySet>();
      const { payload } = await compactVerify(signed.signature, createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
      expect(new TextDecoder().decode(payload)).toContain(`"lots":${rebuilt},`);
    }
  });
});
