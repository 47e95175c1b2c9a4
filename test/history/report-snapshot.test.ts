import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import type { Lot } from '../../src/domain/lot.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { DIALECTS } from '../support/databases.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../support/fixtures.ts';

/**
 * A report's snapshot that names lot versions (0025, src/domain/report-snapshot.ts) against the
 * copying one: for reports made between imports that change their lots, the signed JSON is the
 * search's answer byte for byte, and the page is the one the copied snapshot gives.
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

  /** A search: its answer's text, which is what the copying snapshot stored and the signature signed. */
  let keys = 0;
  const search = async () => {
    const key = `snapshot-${++keys}`;
    const res = await t.app.inject({ url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token, 'idempotency-key': key } });
    expect(res.statusCode).toBe(200);
    const id = new URL(res.json<{ report_url: string }>().report_url).pathname.split('/').at(-1)!;
    const stored = await t.db.kysely.selectFrom('reports').select('lots').where('id', '=', id).executeTakeFirstOrThrow();
    expect(stored.lots).toMatch(/^\{"versions":\[\["(?:copart|iaai)",\d+,\d\],\["(?:copart|iaai)",\d+,\d\]\]\}$/);
    return { id, key, answer: res.body };
  };
  const copiedLots = (answer: string) => answer.slice(answer.indexOf('"lots":') + '"lots":'.length, answer.lastIndexOf(',"report_url":'));

  /**
   * A moment after every report made before it and before every report made after it. The copied
   * snapshot's page cuts its lots' history by time, the named one by the versions it named: the two
   * agree when versions are observed in the order they are stored, as a live import's are.
   */
  const nextMoment = async () => {
    const tick = async (from: number) => {
      while (Date.now() <= from) await new Promise((resolve) => setImmediate(resolve));
    };
    await tick(Date.now());
    const at = Date.now();
    await tick(at);
    return new Date(at);
  };
  const importAt = async (lots: (Lot & { derived?: Partial<Lot> })[]) => t.repos.lots.upsertBatch(lots, { now: await nextMoment(), source: 'feed' });

  it('answers, signs and shows each report made between imports byte for byte as the copied snapshot does', async () => {
    await importAt([first, second]);
    const reports = [await search()];
    await importAt([{ ...first, price: 3500, odometer: 61000, highlight: `${awkward} again`, images: ['https://img.example/b.jpg', 'https://img.example/c.jpg'] }]);
    reports.push(await search());
    // A derived value fills what is unknown; a thinner line leaves the rest; a listing change touches no field.
    await importAt([{ ...second, price: null, derived: { fuel: 'GAS', color: 'RED' } }]);
    await t.repos.lotHistory.recordListing([{ auction: 'iaai', lotId: second.lot_id }], 'left', { now: await nextMoment(), source: 'feed' });
    reports.push(await search());
    await importAt([{ ...second, price: 2500, sale_date: '2026-12-01T17:00:00.000Z' }, { ...first, document: 'CT - CERTIFICATE OF TITLE', highlight: 'plain' }]);
    reports.push(await search());
    await importAt([{ ...first, price: 1, images: ['https://img.example/d.jpg'] }]);

    for (const report of reports) {
      // A repeat of the search's Idempotency-Key replays its answer, rebuilt from the names.
      const replay = await t.app.inject({ url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token, 'idempotency-key': report.key } });
      expect(replay.body).toBe(report.answer);
      const named = (await t.app.inject({ url: `/report/${report.id}` })).body;
      const signed = (await t.app.inject({ url: `/report/${report.id}.json` })).json<{ report: unknown; signature: string }>();
      // Fetched after the signing: the first signature makes the service's first key.
      const jwks = (await t.app.inject({ url: '/.well-known/jwks.json' })).json<JSONWebKeySet>();
      const { payload } = await compactVerify(signed.signature, createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
      expect(new TextDecoder().decode(payload)).toBe(report.answer);

      // The copying design's report: the lots the search answered, stored as they were.
      await t.db.kysely.updateTable('reports').set({ lots: copiedLots(report.answer) }).where('id', '=', report.id).execute();
      await t.db.kysely.deleteFrom('report_signatures').where('report_id', '=', report.id).execute();
      expect((await t.app.inject({ url: `/report/${report.id}` })).body).toBe(named);
    }
  });
});
