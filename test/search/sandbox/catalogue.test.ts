import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { beforeAll, describe, expect, test } from 'vitest';
import { compareLotsNewestFirst, LotSchema } from '../../../src/domain/lot.ts';
import { checkVin } from '../../../src/domain/vin.ts';
import { SANDBOX_AUCTIONS, SANDBOX_CATALOGUE, sandboxLots, sandboxVinOfLot } from '../../../src/search/sandbox/catalogue.ts';

const YEAR_MS = 365 * 24 * 60 * 60 * 1000;

describe('the sandbox catalogue', () => {
  beforeAll(() => {
    // TypeBox checks no format until one is registered: sale dates in the stored form, exactly.
    if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (value) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value) && !Number.isNaN(Date.parse(value)));
    if (!FormatRegistry.Has('uri')) FormatRegistry.Set('uri', (value) => URL.canParse(value));
  });

  test('every VIN is valid (check digit included), once; every lot is a valid Lot of its VIN, newest sale first', () => {
    expect(new Set(SANDBOX_CATALOGUE.map((vehicle) => vehicle.vin)).size).toBe(SANDBOX_CATALOGUE.length);
    const lotKeys = new Set<string>();
    for (const vehicle of SANDBOX_CATALOGUE) {
      expect(checkVin(vehicle.vin), vehicle.vin).toEqual({ ok: true, vin: vehicle.vin });
      for (const lot of vehicle.lots) {
        expect([...Value.Errors(LotSchema, lot)].map((error) => `${error.path} ${error.message}`), `${lot.auction}/${lot.lot_id}`).toEqual([]);
        expect(lot.vin).toBe(vehicle.vin);
        lotKeys.add(`${lot.auction}/${lot.lot_id}`);
      }
      expect([...vehicle.lots].sort(compareLotsNewestFirst)).toEqual(vehicle.lots);
    }
    expect(lotKeys.size).toBe(SANDBOX_CATALOGUE.reduce((sum, vehicle) => sum + vehicle.lots.length, 0));
  });

  test('holds a vehicle with several lots, one with none, one per auction, and one with every red flag', () => {
    expect(SANDBOX_CATALOGUE.some((vehicle) => vehicle.lots.length >= 3)).toBe(true);
    expect(SANDBOX_CATALOGUE.some((vehicle) => vehicle.lots.length === 0)).toBe(true);
    expect(SANDBOX_AUCTIONS).toEqual(['copart', 'iaai']);
    for (const auction of SANDBOX_AUCTIONS) {
      expect(SANDBOX_CATALOGUE.some((vehicle) => vehicle.lots.length === 1 && vehicle.lots[0]!.auction === auction), auction).toBe(true);
    }

    const flagged = SANDBOX_CATALOGUE.filter((vehicle) => {
      const lots = [...vehicle.lots].reverse(); // oldest first
      const dated = lots.filter((lot) => lot.sale_date !== null).map((lot) => Date.parse(lot.sale_date!));
      const odometerGoesDown = lots.some((lot, i) => i > 0 && lot.odometer !== null && lots[i - 1]!.odometer !== null && lot.odometer < lots[i - 1]!.odometer!);
      return (
        lots.some((lot) => /NOT ACTUAL/i.test(lot.odometer_type ?? '')) &&
        odometerGoesDown &&
        lots.some((lot) => /FLOOD|WATER/i.test(`${lot.primary_damage} ${lot.secondary_damage}`)) &&
        lots.some((lot) => /SALVAGE/i.test(lot.document ?? '')) &&
        dated.some((at, i) => i > 0 && at - dated[i - 1]! < YEAR_MS) &&
        lots.some((lot) => /^NO$/i.test(lot.keys ?? ''))
      );
    });
    expect(flagged.map((vehicle) => vehicle.vin)).toEqual(['1N4AL3AP4FC900051']);
  });

  test('lookups: a VIN outside the catalogue has no lots, a lot resolves to its VIN, and callers get copies', () => {
    expect(sandboxLots('1HGCM82633A004352')).toEqual([]);
    expect(sandboxVinOfLot('iaai', 39000012)).toBe('4T1BF1FK7FU900011');
    expect(sandboxVinOfLot('copart', 39000012)).toBeNull();
    const lots = sandboxLots('4T1BF1FK7FU900011');
    lots[0]!.price = 1;
    lots[0]!.images.push('https://example.com/x.jpg');
    expect(sandboxLots('4T1BF1FK7FU900011')[0]!.price).not.toBe(1);
    expect(sandboxLots('4T1BF1FK7FU900011')[0]!.images).toEqual([]);
  });
});
