import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { makeLot } from '../../support/fixtures.ts';
import { createAccountTestApp, type AccountTestApp } from '../../support/customer-app.ts';
import { parseLotInput } from '../../../src/domain/lot-ref.ts';

const VIN = '4JGBF7BE5AA585531';
const OTHER = '1FTEW1EP8KFA90031';

describe('the landing page check by lot', () => {
  let t: AccountTestApp;
  let address = 10;
  beforeAll(async () => {
    t = await createAccountTestApp('sqlite');
    await t.repos.lots.upsertBatch([
      makeLot({ vin: VIN, auction: 'copart', lot_id: 12345678, sale_date: '2024-03-14T18:00:00.000Z', images: ['https://img.test/1.jpg'] }),
      makeLot({ vin: VIN, auction: 'iaai', lot_id: 40111222, sale_date: '2022-08-02T15:30:00.000Z' }),
      makeLot({ vin: OTHER, auction: 'iaai', lot_id: 40999999, sale_date: '2021-01-02T15:30:00.000Z' }),
    ]);
  });
  afterAll(async () => {
    await t?.close();
  });

  // Each check from an address of its own: the box allows 2 a second per address.
  const check = (input: string) => t.app.inject({ url: `/?vin=${encodeURIComponent(input)}`, remoteAddress: `192.0.2.${address++}` });

  test.each([
    ['a Copart lot link', 'https://www.copart.com/lot/12345678/clean-title-2010-mercedes-benz-gl-450-4matic-ca-sacramento', 'Lot 12345678 at Copart'],
    ['an IAAI lot link', 'https://www.iaai.com/VehicleDetail/40111222~US', 'Lot 40111222 at IAAI'],
    ['a link without its scheme', 'www.copart.com/lot/12345678', 'Lot 12345678 at Copart'],
    ['a bare lot number, found at whichever auction has it', ' 40111222 ', 'Lot 40111222 at IAAI'],
  ])('%s finds the vehicle and summarises its records', async (_name, input, lotText) => {
    const res = await check(input);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(`${lotText} is the vehicle with VIN <span class="mono">${VIN}</span>.`);
    expect(res.body).toContain(`<strong>2 auction records</strong> for <span class="mono">${VIN}</span>`);
    expect(res.body).toContain('From Copart and IAAI, last sold Mar 14, 2024, with 1 photos.');
    // The box keeps what was pasted.
    expect(res.body).toContain(`value="${input.trim().replace(/&/g, '&amp;')}"`);
    expect(res.body).not.toContain('img.test');
  });

  test('a lot that is not known, at one auction or at any', async () => {
    expect((await check('https://www.iaai.com/VehicleDetail/40000001~US')).body).toContain('<strong>No lot 40000001 at IAAI</strong> is known to us');
    expect((await check('77777777')).body).toContain('<strong>No auction lot 77777777</strong> is known to us');
  });

  test("a link to another site, or to a page of the auction that is not a lot's, says what the box takes", async () => {
    for (const input of ['https://example.com/lot/12345678', 'https://www.copart.com/vehicleFinder?query=gl450']) {
      const res = await check(input);
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('That link is not a Copart or IAAI lot page.');
      expect(res.body).toContain('aria-invalid="true"');
    }
  });

  test('a VIN is still checked as a VIN', async () => {
    expect((await check(OTHER.toLowerCase())).body).toContain(`<strong>1 auction record</strong> for <span class="mono">${OTHER}</span>`);
  });

  test('parseLotInput: the link forms of both auctions, and nothing else', () => {
    expect(parseLotInput('https://www.copart.com/lot/12345678/x')).toEqual({ auction: 'copart', lotId: 12345678 });
    expect(parseLotInput('https://www.copart.ca/lot/12345678')).toEqual({ auction: 'copart', lotId: 12345678 });
    expect(parseLotInput('http://copart.com/lot/12345678?x=1')).toEqual({ auction: 'copart', lotId: 12345678 });
    expect(parseLotInput('https://www.iaai.com/VehicleDetail/12345678~US')).toEqual({ auction: 'iaai', lotId: 12345678 });
    expect(parseLotInput('https://ca.iaai.com/vehicledetail/12345678')).toEqual({ auction: 'iaai', lotId: 12345678 });
    expect(parseLotInput('12345678')).toEqual({ auction: null, lotId: 12345678 });
    for (const input of ['0', '12345678901', VIN, 'https://copart.com.evil.example/lot/1', 'https://copart.evil.io/lot/1', 'https://notcopart.com/lot/1', 'ftp://www.copart.com/lot/1', 'https://www.copart.com/lot/abc']) {
      expect(parseLotInput(input), input).toBeNull();
    }
  });
});
