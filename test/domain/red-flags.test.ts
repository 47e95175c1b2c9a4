import { describe, expect, it } from 'vitest';
import { damageFlags, historyFlagsOf, keysMissing, odometerFlag, odometerRollback, redFlags, relistedLots, titleFlags } from '../../src/domain/red-flags.ts';
import { makeLot } from '../support/fixtures.ts';

const vin = '4JGBF7BE5AA585531';

describe('red flags, rule by rule, on the auctions\' own values', () => {
  it('reads odometer brands: Copart codes and words, IAAI words', () => {
    expect(odometerFlag('NOT ACTUAL')).toBe('odometer-not-actual');
    expect(odometerFlag('Not Actual')).toBe('odometer-not-actual');
    expect(odometerFlag('N')).toBe('odometer-not-actual');
    expect(odometerFlag('TMU')).toBe('odometer-not-actual');
    expect(odometerFlag('EXEMPT')).toBe('odometer-exempt');
    expect(odometerFlag('E')).toBe('odometer-exempt');
    expect(odometerFlag('EXCEEDS MECHANICAL LIMITS')).toBe('odometer-exceeds-limits');
    expect(odometerFlag('Exceeds Mechanical Limits')).toBe('odometer-exceeds-limits');
    for (const clean of ['ACTUAL', 'Actual', 'A', null, '', 'X']) expect(odometerFlag(clean)).toBeNull();
  });

  it('reads damage: flood/water, fire and burns, hail, biohazard, rollover, frame', () => {
    expect(damageFlags('WATER/FLOOD')).toEqual(['damage-flood']);
    expect(damageFlags('Flood')).toEqual(['damage-flood']);
    expect(damageFlags('BURN - ENGINE')).toEqual(['damage-fire']);
    expect(damageFlags('Burn - Interior')).toEqual(['damage-fire']);
    expect(damageFlags('FIRE')).toEqual(['damage-fire']);
    expect(damageFlags('HAIL')).toEqual(['damage-hail']);
    expect(damageFlags('BIOHAZARD/CHEMICAL')).toEqual(['damage-biohazard']);
    expect(damageFlags('ROLLOVER')).toEqual(['damage-rollover']);
    expect(damageFlags('Roll Over')).toEqual(['damage-rollover']);
    expect(damageFlags('Frame Damage')).toEqual(['damage-frame']);
    for (const clean of ['FRONT END', 'REAR END', 'SIDE', 'Minor Dent/Scratches', 'UNDERCARRIAGE', 'MECHANICAL', null]) expect(damageFlags(clean)).toEqual([]);
  });

  it('reads titles: salvage, rebuilt, non-repairable, junk, destruction; clean titles raise none', () => {
    expect(titleFlags('SC - SALVAGE CERTIFICATE (CA)')).toEqual(['title-salvage']);
    expect(titleFlags('Salvage Certificate (TX)')).toEqual(['title-salvage']);
    expect(titleFlags('SV - SALVAGE TITLE (TX)')).toEqual(['title-salvage']);
    expect(titleFlags('SC')).toEqual(['title-salvage']);
    expect(titleFlags('NR - NON-REPAIRABLE (FL)')).toEqual(['title-non-repairable']);
    expect(titleFlags('Non-Repairable')).toEqual(['title-non-repairable']);
    expect(titleFlags('CD - CERTIFICATE OF DESTRUCTION (TX)')).toEqual(['title-destruction']);
    expect(titleFlags('Certificate of Destruction (TX)')).toEqual(['title-destruction']);
    expect(titleFlags('JUNK (NY)')).toEqual(['title-junk']);
    expect(titleFlags('Rebuilt (FL)')).toEqual(['title-rebuilt']);
    expect(titleFlags('SALVAGE REBUILT')).toEqual(['title-rebuilt']);
    for (const clean of ['CT - CERTIFICATE OF TITLE (CO)', 'Clear (CA)', 'Certificate of title', null]) expect(titleFlags(clean)).toEqual([]);
  });

  it('reads missing keys', () => {
    for (const missing of ['NO', 'No', 'N', 'Missing', 'NO KEYS']) expect(keysMissing(missing)).toBe(true);
    for (const present of ['YES', 'Yes', 'Present', null, '']) expect(keysMissing(present)).toBe(false);
  });

  it('finds the odometer going down from one sale to a later one, ignoring zero readings and undated lots', () => {
    const lots = [
      makeLot({ vin, auction: 'copart', lot_id: 3, sale_date: '2024-03-14T18:00:00.000Z', odometer: 151020 }),
      makeLot({ vin, auction: 'iaai', lot_id: 2, sale_date: '2023-08-02T15:30:00.000Z', odometer: 172691 }),
      makeLot({ vin, auction: 'copart', lot_id: 1, sale_date: '2021-05-11T15:00:00.000Z', odometer: 61250 }),
      makeLot({ vin, auction: 'copart', lot_id: 4, sale_date: null, odometer: 1000 }),
      makeLot({ vin, auction: 'copart', lot_id: 5, sale_date: '2024-06-01T00:00:00.000Z', odometer: 0 }),
    ];
    expect(odometerRollback(lots)).toEqual({
      from: { odometer: 172691, lot: { auction: 'iaai', lotId: 2, saleDate: '2023-08-02T15:30:00.000Z' } },
      to: { odometer: 151020, lot: { auction: 'copart', lotId: 3, saleDate: '2024-03-14T18:00:00.000Z' } },
    });
    expect(odometerRollback(lots.slice(1))).toBeNull();
  });

  it('finds a vehicle sold again within a year, not one sold years apart', () => {
    const a = makeLot({ vin, auction: 'copart', lot_id: 1, sale_date: '2023-02-20T17:00:00.000Z' });
    const b = makeLot({ vin, auction: 'iaai', lot_id: 2, sale_date: '2023-08-02T15:30:00.000Z' });
    const c = makeLot({ vin, auction: 'copart', lot_id: 3, sale_date: '2021-05-11T15:00:00.000Z' });
    expect(relistedLots([b, a, c])).toEqual([b, a]);
    expect(relistedLots([a, c])).toEqual([]);
    expect(relistedLots([a, makeLot({ vin, auction: 'copart', lot_id: 9, sale_date: null })])).toEqual([]);
  });

  it('collects every flag of a vehicle in the page order, each with the lots that show it', () => {
    const flags = redFlags([
      makeLot({ vin, auction: 'copart', lot_id: 3, sale_date: '2024-03-14T18:00:00.000Z', odometer: 151020, primary_damage: 'WATER/FLOOD', document: 'SC - SALVAGE CERTIFICATE (CA)', keys: 'NO' }),
      makeLot({ vin, auction: 'iaai', lot_id: 2, sale_date: '2023-08-02T15:30:00.000Z', odometer: 172691, odometer_type: 'Not Actual', document: 'Salvage Certificate (CA)' }),
    ]);
    expect(flags.map((flag) => flag.kind)).toEqual(['odometer-rollback', 'odometer-not-actual', 'title-salvage', 'damage-flood', 'relisted', 'keys-missing']);
    expect(flags.find((flag) => flag.kind === 'title-salvage')!.lots.map((lot) => lot.lotId)).toEqual([3, 2]);
    expect(redFlags([makeLot({ vin, auction: 'copart', lot_id: 1, odometer_type: 'ACTUAL', primary_damage: 'FRONT END', document: 'Clear (CA)', keys: 'YES' })])).toEqual([]);
  });
});

describe('historyFlagsOf (lot history)', () => {
  const first = { observed_at: '2026-11-01T00:00:00.000Z', source: 'a.csv', changed: { odometer: { from: null, to: 81000 }, document: { from: null, to: 'SALVAGE CERTIFICATE' } } };
  const later = (changed: Record<string, { from: unknown; to: unknown }>, observed_at = '2026-11-20T00:00:00.000Z') => ({ observed_at, source: 'feed', changed });

  it('reads nothing from a first version alone, nor from a first reading or an unread one (0)', () => {
    expect(historyFlagsOf([first])).toEqual([]);
    expect(historyFlagsOf([first, later({ odometer: { from: null, to: 1000 } })])).toEqual([]);
    expect(historyFlagsOf([first, later({ odometer: { from: 0, to: 1000 } })])).toEqual([]);
  });

  it('flags an odometer changed between versions, a washed title, a sale date moved after it passed, a return to the listing', () => {
    expect(historyFlagsOf([first, later({ odometer: { from: 81000, to: 61000 } })])).toEqual(['history-odometer-changed']);
    expect(historyFlagsOf([first, later({ document: { from: 'SALVAGE CERTIFICATE', to: 'CLEAN TITLE' } })])).toEqual(['history-title-washed']);
    expect(historyFlagsOf([first, later({ sale_date: { from: '2026-11-05T17:00:00.000Z', to: '2026-12-01T17:00:00.000Z' } })])).toEqual(['history-relisted-no-sale']);
    expect(historyFlagsOf([first, later({ listing: { from: 'left', to: 'listed' } })])).toEqual(['history-relisted-no-sale']);
  });

  it('leaves alone a rebuilt title made clean, salvage made rebuilt, and a sale date moved before it came', () => {
    expect(historyFlagsOf([first, later({ document: { from: 'REBUILT', to: 'CLEAN TITLE' } })])).toEqual([]);
    expect(historyFlagsOf([first, later({ document: { from: 'SALVAGE CERTIFICATE', to: 'REBUILT' } })])).toEqual([]);
    expect(historyFlagsOf([first, later({ sale_date: { from: '2026-12-05T17:00:00.000Z', to: '2026-12-09T17:00:00.000Z' } })])).toEqual([]);
  });
});
