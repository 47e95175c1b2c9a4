import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { beforeAll, describe, expect, it } from 'vitest';
import { LotSchema, type Lot } from '../../../src/domain/lot.ts';
import { checkVin, computeCheckDigit } from '../../../src/domain/vin.ts';
import { marketKey } from '../../../src/domain/market-key.ts';
import { VEHICLE_MODELS, YARDS } from '../../../src/dev/seed/synthetic-catalogue.ts';
import { Prng } from '../../../src/dev/seed/prng.ts';
import { generateLots, MAX_SYNTHETIC_LOTS, syntheticVin, VinReservoir } from '../../../src/dev/seed/synthetic-lots.ts';

const UNTIL = new Date('2026-03-15T00:00:00.000Z');
const FIVE_YEARS_MS = 5 * 365.25 * 86_400_000;
const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function lots(count: number, seed = 7): Lot[] {
  return [...generateLots({ count, seed, until: UNTIL })];
}

function byVin(list: Lot[]): Map<string, Lot[]> {
  const groups = new Map<string, Lot[]>();
  for (const lot of list) {
    const group = groups.get(lot.vin);
    if (group) group.push(lot);
    else groups.set(lot.vin, [lot]);
  }
  return groups;
}

describe('generateLots', () => {
  let sample: Lot[];

  beforeAll(() => {
    // TypeBox checks formats only through its registry, which the app does not fill (Fastify
    // validates with Ajv); these follow RFC 3339 and WHATWG URL parsing.
    if (!FormatRegistry.Has('date-time')) {
      FormatRegistry.Set('date-time', (value) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value) && !Number.isNaN(Date.parse(value)));
    }
    if (!FormatRegistry.Has('uri')) FormatRegistry.Set('uri', (value) => URL.canParse(value));
    sample = lots(10_000);
  });

  it('makes exactly the number of lots asked for', () => {
    expect(sample).toHaveLength(10_000);
    expect(lots(0)).toEqual([]);
    expect(lots(1)).toHaveLength(1);
  });

  it('makes lots that validate against the Lot schema', () => {
    for (const lot of sample) {
      if (!Value.Check(LotSchema, lot)) {
        throw new Error(`invalid lot ${JSON.stringify(lot)}: ${JSON.stringify([...Value.Errors(LotSchema, lot)].slice(0, 3))}`);
      }
    }
    // Some fields are unknown now and then, as in real feeds.
    expect(sample.some((lot) => lot.price === null)).toBe(true);
    expect(sample.some((lot) => lot.sale_date === null)).toBe(true);
    expect(sample.some((lot) => lot.odometer === null)).toBe(true);
  });

  it('makes valid VINs with correct check digits, mostly North American', () => {
    const vins = [...byVin(sample).keys()];
    // Cars sold in the US carry the check digit whatever their origin, so every VIN has one.
    const invalid = vins.filter((vin) => !checkVin(vin).ok || vin[8] !== computeCheckDigit(vin));
    expect(invalid).toEqual([]);
    const northAmerican = vins.filter((vin) => vin[0]! >= '1' && vin[0]! <= '5').length / vins.length;
    expect(northAmerican).toBeGreaterThan(0.65);
    expect(northAmerican).toBeLessThan(0.95);
    expect(new Set(vins.map((vin) => vin[0])).size).toBeGreaterThanOrEqual(6);
  });

  it('yields the lots of a vehicle together, several per VIN on average', () => {
    const seen = new Set<string>();
    let previousVin: string | null = null;
    for (const lot of sample) {
      if (lot.vin !== previousVin) {
        expect(seen.has(lot.vin), `${lot.vin} appears in two groups`).toBe(false);
        seen.add(lot.vin);
        previousVin = lot.vin;
      }
    }
    const groups = byVin(sample);
    const average = sample.length / groups.size;
    expect(average).toBeGreaterThan(1.4);
    expect(average).toBeLessThan(1.9);
    const sizes = [...groups.values()].map((group) => group.length);
    expect(Math.max(...sizes)).toBe(4);
    expect(sizes.filter((size) => size === 1).length / sizes.length).toBeGreaterThan(0.4);
  });

  it('keeps the facts of a vehicle the same in all its lots and its history in order', () => {
    const problems: string[] = [];
    for (const [vin, group] of byVin(sample)) {
      for (const field of ['brand', 'model', 'year', 'name', 'engine', 'body', 'color', 'fuel', 'drive', 'transmission'] as const) {
        // The feeds spell a make and model differently; their keys are the vehicle's.
        const spelled = field === 'brand' || field === 'model' || field === 'name';
        const values = new Set(group.map((lot) => (spelled ? marketKey(lot[field]) : lot[field])).filter((value) => value !== null));
        if (values.size > 1) problems.push(`${vin}: ${field} differs between lots: ${[...values].join(', ')}`);
      }
      // Generated oldest sale first; a lot still to be sold comes last.
      const dates = group.map((lot) => lot.sale_date);
      const dated = dates.filter((date): date is string => date !== null);
      if (dates.slice(0, dated.length).some((date) => date === null)) problems.push(`${vin}: an undated lot before a dated one`);
      if (dated.join() !== [...dated].sort().join()) problems.push(`${vin}: sale dates out of order`);
      const odometers = group.map((lot) => lot.odometer).filter((value): value is number => value !== null);
      if (odometers.some((value, i) => i > 0 && value < odometers[i - 1]!)) problems.push(`${vin}: odometer went down: ${odometers.join(', ')}`);
    }
    expect(problems).toEqual([]);
  });

  it('gives every lot a unique 8-digit lot id at copart or iaai, with plausible values', () => {
    const keys = new Set(sample.map((lot) => `${lot.auction}:${lot.lot_id}`));
    expect(keys.size).toBe(sample.length);
    const problems: string[] = [];
    const auctions = new Map<string, number>();
    for (const lot of sample) {
      const where = `${lot.auction} ${lot.lot_id}`;
      auctions.set(lot.auction, (auctions.get(lot.auction) ?? 0) + 1);
      if (lot.lot_id < 10_000_000 || lot.lot_id >= 100_000_000) problems.push(`${where}: lot id not 8 digits`);
      if (lot.sale_date !== null) {
        const at = Date.parse(lot.sale_date);
        if (!ISO_UTC_MS.test(lot.sale_date)) problems.push(`${where}: sale_date ${lot.sale_date} not UTC with ms`);
        if (at >= UNTIL.getTime() || at < UNTIL.getTime() - FIVE_YEARS_MS - 86_400_000) problems.push(`${where}: sale_date ${lot.sale_date} outside the five years`);
        if (lot.year! > new Date(at).getUTCFullYear() + 1) problems.push(`${where}: model year ${lot.year} sold in ${lot.sale_date}`);
      } else if (lot.price !== null) {
        problems.push(`${where}: a price without a sale`);
      }
      if (lot.images.length < 3 || lot.images.length > 10) problems.push(`${where}: ${lot.images.length} images`);
      const host = lot.auction === 'copart' ? 'cs.copart.com' : 'vis.iaai.com';
      if (lot.images.some((image) => new URL(image).host !== host)) problems.push(`${where}: image not on ${host}`);
      if (lot.location_zip !== null && !/^\d{5}$/.test(lot.location_zip)) problems.push(`${where}: ZIP ${lot.location_zip}`);
      if (lot.odometer !== null && lot.odometer <= 0) problems.push(`${where}: odometer ${lot.odometer}`);
      if (lot.primary_damage === lot.secondary_damage) problems.push(`${where}: the same damage twice`);
      if (lot.price !== null && lot.retail_value !== null && lot.price > lot.retail_value) problems.push(`${where}: sold above retail value`);
    }
    expect(problems.slice(0, 10)).toEqual([]);
    expect([...auctions.keys()].sort()).toEqual(['copart', 'iaai']);
    expect(auctions.get('iaai')! / sample.length).toBeGreaterThan(0.3);
  });

  it('spells a make, model and damage as each feed does, the same key either way', () => {
    const spellings = new Map<string, Set<string>>();
    for (const lot of sample) {
      for (const value of [lot.brand, lot.model, lot.primary_damage]) {
        if (value === null) continue;
        const key = marketKey(value)!;
        if (!spellings.has(key)) spellings.set(key, new Set());
        spellings.get(key)!.add(value);
      }
    }
    expect(spellings.get('F150')).toEqual(new Set(['F-150', 'F150']));
    expect(spellings.get('FRONTEND')).toEqual(new Set(['FRONT END', 'Front end']));
    expect(spellings.get('FORD')).toEqual(new Set(['FORD', 'Ford']));
    expect(spellings.get('MERCEDESBENZ')).toEqual(new Set(['MERCEDES-BENZ', 'Mercedes-Benz']));
  });

  it('spreads the prices of comparable lots unevenly: a long upper tail, clean titles higher, severe damage lower', () => {
    const shares = (keep: (lot: Lot) => boolean) =>
      sample
        .filter((lot) => lot.price !== null && lot.retail_value !== null && keep(lot))
        .map((lot) => lot.price! / lot.retail_value!)
        .sort((a, b) => a - b);
    const quantile = (list: number[], q: number) => list[Math.floor(q * (list.length - 1))]!;
    const frontEnd = shares((lot) => marketKey(lot.primary_damage) === 'FRONTEND');
    const median = quantile(frontEnd, 0.5);
    // Log-normal: the upper quartile lies further from the median than the lower one.
    expect(quantile(frontEnd, 0.75) - median).toBeGreaterThan(1.15 * (median - quantile(frontEnd, 0.25)));
    expect(quantile(frontEnd, 0.9) / quantile(frontEnd, 0.1)).toBeGreaterThan(2.5);
    const clean = shares((lot) => marketKey(lot.primary_damage) === 'FRONTEND' && lot.document?.endsWith(' - CERTIFICATE OF TITLE') === true);
    expect(quantile(clean, 0.5)).toBeGreaterThan(1.15 * median);
    const flood = shares((lot) => marketKey(lot.primary_damage) === 'WATERFLOOD');
    expect(quantile(flood, 0.5)).toBeLessThan(0.5 * median);
  });

  it('is deterministic for a seed, a smaller run is a prefix of a larger one, and seeds differ', () => {
    expect(lots(2_000, 99)).toEqual(lots(2_000, 99));
    expect(lots(500, 99)).toEqual(lots(2_000, 99).slice(0, 500));
    const other = lots(500, 100);
    const vins = new Set(lots(500, 99).map((lot) => lot.vin));
    expect(other.filter((lot) => vins.has(lot.vin))).toEqual([]);
  });

  it('keeps VINs unique past the first million vehicles of a run', () => {
    // The worst case: every vehicle of one model, one WMI, one descriptor and one plant, so that
    // only the serial and the per-million plant code tell VINs apart.
    const model = { wmis: ['1HG'], vds: ['CV1F3'], plants: 'A' };
    const rng = new Prng(11);
    const vins = new Set<string>();
    const count = 1_050_000;
    for (let index = 0; index < count; index++) vins.add(syntheticVin(rng, model, 2019, index, 123_456));
    expect(vins.size).toBe(count);
    const beyond = syntheticVin(rng, model, 2019, 1_000_001, 0);
    expect(checkVin(beyond)).toEqual({ ok: true, vin: beyond });
    expect(() => syntheticVin(rng, model, 2019, 11_000_000, 0)).toThrow(RangeError);
  });

  it('reports each vehicle before its lots', () => {
    const reported: [string, number][] = [];
    const yielded: Lot[] = [];
    for (const lot of generateLots({ count: 1_000, seed: 5, until: UNTIL, onVehicle: (vin, n) => reported.push([vin, n]) })) {
      yielded.push(lot);
      expect(reported.at(-1)![0]).toBe(lot.vin);
    }
    expect(reported.reduce((sum, [, n]) => sum + n, 0)).toBe(1_000);
    expect(reported.map(([vin]) => vin)).toEqual([...byVin(yielded).keys()]);
  });

  it('refuses a count it cannot honour', () => {
    for (const count of [-1, 1.5, Number.NaN, MAX_SYNTHETIC_LOTS + 1]) {
      expect(() => generateLots({ count }).next()).toThrow(RangeError);
    }
  });
});

describe('the catalogue', () => {
  it('has only characters a VIN can carry in its WMIs, descriptors and plant codes', () => {
    for (const model of VEHICLE_MODELS) {
      for (const wmi of model.wmis) expect(wmi, model.model).toMatch(/^[0-9A-HJ-NPR-Z]{3}$/);
      for (const vds of model.vds) expect(vds, model.model).toMatch(/^[0-9A-HJ-NPR-Z]{5}$/);
      expect(model.plants, model.model).toMatch(/^[A-HJ-NPR-Z]+$/);
      expect(model.years[0]).toBeLessThanOrEqual(model.years[1]);
    }
    for (const yard of YARDS) expect(yard.zip).toMatch(/^\d{5}$/);
  });
});

describe('VinReservoir', () => {
  it('keeps a uniform, deterministic sample of the VINs offered', () => {
    const vins = Array.from({ length: 10_000 }, (_, i) => `VIN${String(i).padStart(14, '0')}`);
    const sampleOf = (seed: number) => {
      const reservoir = new VinReservoir(500, seed);
      for (const vin of vins) reservoir.offer(vin);
      return reservoir;
    };
    const reservoir = sampleOf(1);
    expect(reservoir.offered).toBe(10_000);
    expect(reservoir.vins).toHaveLength(500);
    expect(new Set(reservoir.vins).size).toBe(500);
    expect(sampleOf(1).vins).toEqual(reservoir.vins);
    expect(sampleOf(2).vins).not.toEqual(reservoir.vins);
    // Uniform: about half the sample comes from each half of the stream.
    const firstHalf = reservoir.vins.filter((vin) => vins.indexOf(vin) < 5_000).length;
    expect(firstHalf).toBeGreaterThan(200);
    expect(firstHalf).toBeLessThan(300);
  });

  it('keeps everything when fewer VINs than its size are offered', () => {
    const reservoir = new VinReservoir(10);
    for (const vin of ['A', 'B', 'C']) reservoir.offer(vin);
    expect(reservoir.vins).toEqual(['A', 'B', 'C']);
  });
});
