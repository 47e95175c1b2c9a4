import { describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import { LOT_FIELDS, LotSchema, MAX_IMAGES, MAX_IMAGE_URL_CHARS } from '../../src/domain/lot.ts';
import { describeFieldErrors, normaliseLot, normaliseSaleDate, type NormaliseResult } from '../../src/ingest/normalise-lot.ts';

const VIN = '4JGBF7BE5AA585531';

function ok(result: NormaliseResult) {
  if (!result.ok) throw new Error(`expected a valid lot, got ${describeFieldErrors(result.errors)}`);
  return result.lot;
}

function errorsOf(result: NormaliseResult): Record<string, string> {
  if (result.ok) throw new Error('expected field errors, got a valid lot');
  return Object.fromEntries(result.errors.map((error) => [error.field, error.message]));
}

describe('normaliseLot', () => {
  it('fills every absent field with null (images with []) and passes LotSchema', () => {
    const lot = ok(normaliseLot({ vin: VIN, auction: 'copart', lot_id: 26519090 }));
    expect(Object.keys(lot).sort()).toEqual([...LOT_FIELDS].sort());
    for (const field of LOT_FIELDS) {
      if (!['vin', 'auction', 'lot_id', 'images'].includes(field)) expect(lot[field], field).toBeNull();
    }
    expect(lot.images).toEqual([]);
    expect(Value.Check(LotSchema, lot)).toBe(true);
  });

  it('trims strings, turns blanks into null, upper-cases the VIN and lower-cases the auction', () => {
    const lot = ok(
      normaliseLot({
        vin: `  ${VIN.toLowerCase()} `,
        auction: ' IAAI ',
        lot_id: 1,
        color: '  BLACK ',
        keys: '   ',
        body: '',
        document: null,
      }),
    );
    expect(lot).toMatchObject({ vin: VIN, auction: 'iaai', color: 'BLACK', keys: null, body: null, document: null });
  });

  it('accepts whole numbers given as numeric strings and rejects anything fractional or signed', () => {
    expect(ok(normaliseLot({ vin: VIN, auction: 'copart', lot_id: ' 12345 ', price: '8800', odometer: 172691 }))).toMatchObject({
      lot_id: 12345,
      price: 8800,
      odometer: 172691,
    });
    const errors = errorsOf(
      normaliseLot({ vin: VIN, auction: 'copart', lot_id: 1, price: 12.5, odometer: '12,500', repair_cost: -3, cylinders: true }),
    );
    expect(errors.price).toBe('must be a whole number; got 12.5');
    expect(errors.odometer).toBe('must be a whole number; got "12,500"');
    expect(errors.repair_cost).toBe('must be from 0 to 2147483647; got -3');
    expect(errors.cylinders).toBe('must be a whole number; got true');
  });

  it('keeps integers inside the database column range and years plausible', () => {
    const errors = errorsOf(normaliseLot({ vin: VIN, auction: 'copart', lot_id: 2_147_483_648, year: 172691 }));
    expect(errors.lot_id).toMatch(/from 0 to 2147483647/);
    expect(errors.year).toBe('must be from 1886 to 2100; got 172691');
  });

  it('requires vin, auction and lot_id, and checks the VIN with the contract rules', () => {
    expect(errorsOf(normaliseLot({}))).toEqual({ vin: 'is required', auction: 'is required', lot_id: 'is required' });
    expect(errorsOf(normaliseLot({ vin: '4JGBF7BE4AA585531', auction: 'copart', lot_id: 1 })).vin).toBe(
      'The vin check digit (position 9) is 4, but this VIN requires 5.',
    );
    expect(errorsOf(normaliseLot({ vin: 'SHORT', auction: 'copart', lot_id: 1 })).vin).toMatch(/exactly 17 characters/);
    expect(errorsOf(normaliseLot({ vin: VIN, auction: 'co part', lot_id: 1 })).auction).toMatch(/must be one word/);
    expect(errorsOf(normaliseLot({ vin: 12345, auction: 'copart', lot_id: 1 })).vin).toBe('must be a string; got 12345');
  });

  it('refuses numbers for text fields rather than guess at lost leading zeros', () => {
    expect(errorsOf(normaliseLot({ vin: VIN, auction: 'copart', lot_id: 1, location_zip: 2134 })).location_zip).toBe(
      'must be a string; got 2134',
    );
  });

  it('names unknown fields instead of dropping their values', () => {
    expect(errorsOf(normaliseLot({ vin: VIN, auction: 'copart', lot_id: 1, odometr: 5 }))).toEqual({ odometr: 'is not a Lot field' });
  });

  it('accepts absolute http(s) image URLs only, trimmed and without repeats', () => {
    const lot = ok(
      normaliseLot({
        vin: VIN,
        auction: 'copart',
        lot_id: 1,
        images: [' https://cs.copart.com/a.jpg ', 'http://vis.iaai.com/b?x=1~2', 'https://cs.copart.com/a.jpg'],
      }),
    );
    expect(lot.images).toEqual(['https://cs.copart.com/a.jpg', 'http://vis.iaai.com/b?x=1~2']);
    for (const bad of [['cs.copart.com/v1/a.JPG'], ['ftp://example.com/a.jpg'], [''], [42], 'https://cs.copart.com/a.jpg']) {
      expect(errorsOf(normaliseLot({ vin: VIN, auction: 'copart', lot_id: 1, images: bad })).images, JSON.stringify(bad)).toMatch(
        /absolute http\(s\) URL/,
      );
    }
  });

  it('reports every wrong field of a record at once, in one readable line', () => {
    const result = normaliseLot({ vin: VIN, auction: 'copart', lot_id: 'x', price: 1.5 });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(describeFieldErrors(result.errors)).toBe('price: must be a whole number; got 1.5; lot_id: must be a whole number; got "x"');
  });

  it('refuses a record that is not an object', () => {
    expect(errorsOf(normaliseLot([1, 2]))).toEqual({ '(record)': 'must be an object; got [1,2]' });
  });
});

describe('sale_date normalisation', () => {
  const cases: [string, string][] = [
    ['2020-06-06T07:01:00Z', '2020-06-06T07:01:00.000Z'],
    ['2020-06-06T07:01:00.5Z', '2020-06-06T07:01:00.500Z'],
    ['2020-06-06T07:01:00.123456z', '2020-06-06T07:01:00.123Z'],
    ['2024-05-01T10:00:00-07:00', '2024-05-01T17:00:00.000Z'],
    ['2024-05-01T01:30+0530', '2024-04-30T20:00:00.000Z'],
    ['2024-12-31 23:00:00-02', '2025-01-01T01:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    [' 2020-06-06T07:01:00.000Z ', '2020-06-06T07:01:00.000Z'],
  ];
  it.each(cases)('%s -> %s', (input, expected) => {
    expect(normaliseSaleDate(input)).toEqual({ value: expected });
  });

  it('treats absent and blank as unknown', () => {
    expect(normaliseSaleDate(undefined)).toEqual({ value: null });
    expect(normaliseSaleDate('')).toEqual({ value: null });
  });

  it.each([
    ['2020-06-06T07:01:00', /time zone is missing/],
    ['2023-02-29T00:00:00Z', /not a real date/],
    ['2020-13-01', /not a real date/],
    ['2020-06-06T24:00:00Z', /not a real date/],
    ['06/06/2020', /ISO 8601/],
    ['0', /ISO 8601/],
    ['2020-06-06T07:01:00+25:00', /impossible time-zone offset/],
  ])('refuses %s', (input, message) => {
    const result = normaliseSaleDate(input);
    expect('error' in result && result.error).toMatch(message);
  });

  it('refuses a non-string', () => {
    expect(normaliseSaleDate(1591426860000)).toEqual({ error: 'must be a string; got 1591426860000' });
  });

  it('skips a record with an over-long text field, naming the field and its limit', () => {
    const errors = errorsOf(normaliseLot({ vin: VIN, auction: 'copart', lot_id: 1, name: 'x'.repeat(5000), location_zip: '9'.repeat(21) }));
    expect(errors.name).toBe(`must be at most ${maxLengthOf('name')} characters; got 5000`);
    expect(errors.location_zip).toBe('must be at most 20 characters; got 21');
    expect(ok(normaliseLot({ vin: VIN, auction: 'copart', lot_id: 1, name: 'x'.repeat(maxLengthOf('name')) })).name).toHaveLength(maxLengthOf('name'));
  });

  it('skips a record with too many images or an over-long image URL', () => {
    const url = (i: number) => `https://img.example.com/${i}.jpg`;
    const many = Array.from({ length: MAX_IMAGES + 1 }, (_, i) => url(i));
    expect(errorsOf(normaliseLot({ vin: VIN, auction: 'copart', lot_id: 1, images: many })).images).toBe(
      `must hold at most ${MAX_IMAGES} URLs; got ${MAX_IMAGES + 1}`,
    );
    expect(ok(normaliseLot({ vin: VIN, auction: 'copart', lot_id: 1, images: many.slice(1) })).images).toHaveLength(MAX_IMAGES);
    const long = `https://img.example.com/${'a'.repeat(MAX_IMAGE_URL_CHARS)}`;
    expect(errorsOf(normaliseLot({ vin: VIN, auction: 'copart', lot_id: 1, images: [url(1), long] })).images).toBe(
      `item 1 must be at most ${MAX_IMAGE_URL_CHARS} characters; got ${long.length}`,
    );
  });

  it('keeps numbers in their ranges: odometer, cylinders, year', () => {
    const errors = errorsOf(normaliseLot({ vin: VIN, auction: 'copart', lot_id: 1, odometer: 10_000_000, cylinders: 33 }));
    expect(errors.odometer).toBe('must be from 0 to 9999999; got 10000000');
    expect(errors.cylinders).toBe('must be from 0 to 32; got 33');
  });
});

function maxLengthOf(field: keyof typeof LotSchema.properties): number {
  const schema = LotSchema.properties[field] as { anyOf?: { maxLength?: number }[] };
  return schema.anyOf!.find((member) => member.maxLength !== undefined)!.maxLength!;
}
