import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { Lot } from '../../../src/domain/lot.ts';
import { fixture, lotsOf, readPrepared, rejectionsOf, streamOf } from '../helpers.ts';

/** The IAAI lot of the vendor's sample record, as the importer must store it. */
const BMW_LOT: Lot = {
  vin: 'WBA3B5G55FNS17722',
  body: 'Sedan',
  fuel: 'Gasoline',
  keys: null,
  name: 'BMW 328I xDrive',
  type: 'Automobile',
  year: 2015,
  brand: 'BMW',
  color: 'Blue',
  drive: 'All wheel drive',
  model: '3er',
  price: null, // no final bid yet
  engine: '2.0l i-4 di, dohc, vvt, turbo, 240hp',
  lot_id: 45289258, // the auction's lot number, not the vendor's id 20421492
  auction: 'iaai',
  document: 'Non-Repairable',
  location: 'Templeton, MA',
  odometer: 243617, // miles, not the 392064 km
  cylinders: 4,
  highlight: 'Run & Drive',
  sale_date: null,
  repair_cost: 9554,
  location_zip: null,
  retail_value: 8776,
  transmission: 'Automatic',
  configuration: null,
  odometer_type: 'Actual',
  primary_damage: 'Rear',
  secondary_damage: 'Left Side',
  images: ['https://i.auctionsapi.com/iaai/bmw/3er/2015/45289258/WBA3B5G55FNS17722-1.webp'],
};

const ARRAY = fixture('auctionsapi/vehicles-array.json');

describe('auctionsapi vehicle records', () => {
  it('loads the real sample, a single pretty-printed record', async () => {
    const result = await readPrepared(fixture('auctionsapi/sample-car.json'));
    expect(result.description).toBe('auctionsapi vehicle records (JSON)');
    expect(result.failure).toBeNull();
    expect(result.prepared).toEqual([{ ok: true, line: 1, lot: BMW_LOT }]);
  });

  it('loads a JSON array of records, one Lot per lot, each on the line its vehicle starts', async () => {
    const result = await readPrepared(ARRAY);
    expect(result.description).toBe('auctionsapi vehicle records (JSON array)');
    expect(result.failure).toBeNull();
    const lots = lotsOf(result);
    expect(lots).toHaveLength(3);
    expect(lots[0]).toEqual(BMW_LOT);
    expect(lots[1]).toMatchObject({
      vin: '1HGCV1F3XLA012873',
      auction: 'copart',
      lot_id: 41873052,
      name: 'Honda Accord Sport',
      brand: 'Honda',
      drive: 'Front wheel drive',
      transmission: 'Cvt',
      sale_date: '2021-03-16T18:00:00.000Z',
      price: 11200, // final_bid, not bid
      odometer: 21455,
      document: 'Salvage Certificate',
      secondary_damage: null,
      location: 'San Diego, CA',
      images: [
        'https://i.auctionsapi.com/copart/honda/accord/2020/41873052/1HGCV1F3XLA012873-1.webp',
        'https://i.auctionsapi.com/copart/honda/accord/2020/41873052/1HGCV1F3XLA012873-2.webp',
      ],
    });
    expect(lots[2]).toMatchObject({
      auction: 'iaai',
      lot_id: 33012007,
      odometer_type: 'Not actual',
      retail_value: null, // 0 is no figure
      highlight: 'Stationary',
      location: 'Las Vegas, NV',
      images: [],
    });
    const lines = result.prepared.map((p) => p.line);
    const text = readFileSync(ARRAY, 'utf8').split('\n');
    expect(text[lines[0]! - 1]).toBe('  {');
    expect(text[lines[1]! - 1]).toBe('  {');
    expect(lines[1]).toBe(lines[2]); // both lots of the Accord
    expect(rejectionsOf(result)).toEqual([{ line: expect.any(Number), reason: 'the vehicle record has no lots' }]);
  });

  it('loads NDJSON of records, and gzip found by content', async () => {
    const records = JSON.parse(readFileSync(ARRAY, 'utf8')) as unknown[];
    const ndjson = records.map((record) => JSON.stringify(record)).join('\n') + '\n';
    const result = await readPrepared(streamOf(gzipSync(ndjson), 333));
    expect(result.description).toBe('auctionsapi vehicle records (NDJSON, gzip)');
    expect(lotsOf(result)).toEqual(lotsOf(await readPrepared(ARRAY)));
    expect(result.prepared.map((p) => p.line)).toEqual([1, 2, 2, 3]);
  });

  it('keeps the records before the break of an array that never closes, and says so', async () => {
    const text = readFileSync(ARRAY, 'utf8');
    const cut = text.indexOf('"lot": "33012007"');
    const result = await readPrepared(streamOf(text.slice(0, cut), 500));
    expect(lotsOf(result)).toEqual([BMW_LOT]);
    expect(result.failure?.message).toMatch(/^the file ends inside the record that starts on line \d+: it is truncated$/);
  });

  it('reports a broken record in an array and reads the next one', async () => {
    const records = JSON.parse(readFileSync(ARRAY, 'utf8')) as unknown[];
    const text = `[\n${JSON.stringify(records[0])},\n{"vin": "1HGCV1F3XLA012873", "lots": [{"lot": 1, }]},\n${JSON.stringify(records[1])}\n]\n`;
    const result = await readPrepared(streamOf(text));
    expect(result.failure).toBeNull();
    expect(lotsOf(result).map((lot) => lot.lot_id)).toEqual([45289258, 41873052, 33012007]);
    expect(rejectionsOf(result)).toEqual([{ line: 3, reason: expect.stringMatching(/^invalid JSON: /) }]);
  });

  it('names every wrong field of a lot, and a lot without an auction', async () => {
    const record = { vin: 'WBA3B5G55FNS17722', year: 2015, lots: [{ lot: '77', odometer: { mi: 'lots' }, sale_date: '2024-05-01 10:00' }] };
    const result = await readPrepared(streamOf(JSON.stringify(record)), { format: 'auctionsapi' });
    expect(rejectionsOf(result)).toEqual([
      {
        line: 1,
        reason:
          'odometer: must be a number of 0 or more; got "lots"; auction: the lot names no auction (domain.name); sale_date: must be an ISO 8601 date-time with a time zone, such as 2024-05-01T15:00:00Z (the time zone is missing); got "2024-05-01 10:00"',
      },
    ]);
  });
});
