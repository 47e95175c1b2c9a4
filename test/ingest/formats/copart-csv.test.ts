import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { Lot } from '../../../src/domain/lot.ts';
import { copartSaleDate, odometerBrand, titleDocument } from '../../../src/ingest/formats/copart-csv.ts';
import { IngestError } from '../../../src/ingest/ingest-error.ts';
import { fixture, lotsOf, readPrepared, rejectionsOf, streamOf } from '../helpers.ts';

/** The one real row of Copart's sample, as the importer must store it. */
const MERCEDES: Lot = {
  vin: '4JGBF7BE5AA585531',
  body: '4DR SPOR',
  fuel: 'GAS',
  keys: 'Yes',
  name: 'MERCEDES-BENZ GL 450 4MA',
  type: 'Automobile',
  year: 2010,
  brand: 'MERCEDES-BENZ',
  color: 'BLACK',
  drive: 'All wheel drive',
  model: 'G CLASS',
  price: null,
  engine: '4.6L 8',
  lot_id: 26519090,
  auction: 'copart',
  document: 'Salvage certificate (CA)',
  location: 'VALLEJO, CA',
  odometer: 172691,
  cylinders: 8,
  highlight: 'Run & Drive Verified',
  sale_date: null,
  repair_cost: null,
  location_zip: '94590 7203',
  retail_value: 12563,
  transmission: 'AUTOMATIC',
  configuration: '450 4MATIC',
  odometer_type: 'Actual',
  primary_damage: 'SIDE',
  secondary_damage: 'REAR END',
  images: ['https://cs.copart.com/v1/AUTH_svc.pdoc00001/PIX243/7c1aa179-9345-4915-9576-a3175c7f54b6.JPG'],
};

const QUIRKS = fixture('copart/salesdata-59-quirks.csv');

/** A CSV text with every field quoted, as Copart writes it. */
function toCsv(rows: string[][]): string {
  return rows.map((row) => row.map((value) => `"${value.replace(/"/g, '""')}"`).join(',')).join('\n') + '\n';
}

describe('Copart sales-data CSV', () => {
  it('loads the real sample (49 columns) with every quirk normalised', async () => {
    const result = await readPrepared(fixture('copart/salesdata-49.csv'));
    expect(result.description).toBe('Copart sales-data CSV (49 columns)');
    expect(result.failure).toBeNull();
    expect(result.prepared).toEqual([{ ok: true, line: 2, lot: MERCEDES }]);
  });

  it('loads the 59-column layout, and maps each quirk of the crafted rows', async () => {
    const result = await readPrepared(QUIRKS);
    expect(result.description).toBe('Copart sales-data CSV (59 columns)');
    expect(result.failure).toBeNull();
    const lots = lotsOf(result);
    expect(lots.map((lot) => lot.lot_id)).toEqual([26519090, 41873052, 52218870, 60012345]);
    expect(lots[0]).toEqual(MERCEDES);
    expect(lots[1]).toMatchObject({
      vin: '1HGCV1F3XLA012873',
      name: 'HONDA ACCORD SPORT',
      sale_date: '2026-10-02T19:00:00.000Z', // 12:00 PDT
      odometer: 21455,
      odometer_type: 'Not actual',
      document: 'Non-repairable (FL)',
      keys: 'No',
      highlight: null, // DEFAULT
      retail_value: null, // 0.0
      repair_cost: null, // 0.0
      engine: '1.5L 4',
      secondary_damage: null,
      location: 'MIAMI, FL',
      location_zip: '33054',
      images: ['https://cs.copart.com/v1/AUTH_svc.pdoc00001/lpp/0321/092C4BCDF4A0BDD9434C37C62C4F0815_thb.jpg'],
    });
    expect(lots[2]).toMatchObject({
      sale_date: '2026-10-02T14:30:00.000Z', // 10/2/2026 9:30 EST
      odometer: null, // 0.0
      odometer_type: 'Exempt',
      document: 'Certificate of title (TX)',
      keys: 'Yes',
      engine: '2.7L 6',
      cylinders: null, // 0
      highlight: 'Vehicle Starts',
      location_zip: '75211 1234', // ZIP+4 as given
      retail_value: 31250, // "31,250.0"
      repair_cost: 9844, // "9843.5", whole dollars
    });
    expect(lots[3]).toMatchObject({
      odometer_type: 'X', // unknown brand code: kept as given
      document: 'ZZ (GA)', // unknown title type: kept as given
      keys: null,
      retail_value: null, // CAD figures are not dollars
      repair_cost: null,
      images: [],
    });
    expect(rejectionsOf(result)).toEqual([
      { line: 6, reason: 'vin: The vin check digit (position 9) is X, but this VIN requires 1.' },
      { line: 7, reason: expect.stringMatching(/^sale_date: Time Zone "XYZ" is not one this importer knows \(UTC, GMT, .*PDT/) },
    ]);
  });

  it('finds columns by header name, in any order', async () => {
    const rows = parse(readFileSync(QUIRKS), { relax_column_count: false });
    const order = rows[0]!.map((_, i) => i).reverse();
    const shuffled = toCsv(rows.map((row) => order.map((i) => row[i]!)));
    const result = await readPrepared(streamOf(shuffled));
    expect(lotsOf(result)).toEqual(lotsOf(await readPrepared(QUIRKS)));
  });

  it('skips a row with the wrong number of columns in the middle of a good file, and loads the rest', async () => {
    const rows = parse(readFileSync(QUIRKS));
    const text = toCsv(rows.slice(0, 3)) + '"7","not","enough","columns"\n' + toCsv(rows.slice(3, 5));
    const result = await readPrepared(streamOf(text, 100));
    expect(result.failure).toBeNull();
    expect(lotsOf(result).map((lot) => lot.lot_id)).toEqual([26519090, 41873052, 52218870, 60012345]);
    expect(rejectionsOf(result)).toEqual([{ line: 4, reason: 'has 4 columns; the header has 59' }]);
  });

  it('keeps the rows before a cut and says where a truncated file ends', async () => {
    const text = readFileSync(QUIRKS, 'utf8');
    // Cut inside a quoted field of row 5 (line 6): the quote never closes.
    const cut = text.indexOf('"PROGRESSIVE', text.indexOf('\n"5"')) + 5;
    const quoted = await readPrepared(streamOf(text.slice(0, cut)));
    expect(lotsOf(quoted).map((lot) => lot.lot_id)).toEqual([26519090, 41873052, 52218870, 60012345]);
    expect(quoted.failure?.message).toBe(
      'the file ends inside a quoted field opened on line 6: it is truncated (or a stray quote on that line swallowed the rest of the file)',
    );
    // Cut right after a delimiter: the last row has too few columns and no line end.
    const unquoted = `${text}"8","1","CA - VALLEJO","0",`;
    const short = await readPrepared(streamOf(unquoted));
    expect(short.failure?.message).toBe('the file ends in the middle of line 8 (has 5 columns; the header has 59): it is truncated');
    expect(rejectionsOf(short)).toHaveLength(2); // the two bad rows of the fixture, not the cut one
  });

  it('refuses an HTML page saved in place of the CSV', async () => {
    await expect(readPrepared(fixture('copart/bot-wall.csv'))).rejects.toThrow(
      new IngestError('refused', 'looks like an HTML page (a bot wall or a login page?), not CSV or JSON'),
    );
    // Even when the format is forced.
    await expect(readPrepared(fixture('copart/bot-wall.csv'), { format: 'copart-csv' })).rejects.toThrow(/HTML page/);
  });

  it('refuses --format copart-csv for a file without Copart\'s header', async () => {
    await expect(readPrepared(fixture('usa-cars/usa-cars-subset.csv'), { format: 'copart-csv' })).rejects.toThrow(
      /not a Copart sales-data CSV/,
    );
  });
});

describe('Copart field rules', () => {
  it.each([
    ['0', '', '', null],
    ['', '1200', 'PDT', null],
    ['20200715', '1800', 'CDT', '2020-07-15T23:00:00.000Z'],
    ['20200115', '1800', 'CST', '2020-01-16T00:00:00.000Z'],
    ['7/15/2020', '0930', 'EDT', '2020-07-15T13:30:00.000Z'],
    ['2020-07-15', '900', 'HST', '2020-07-15T19:00:00.000Z'],
    ['20200715', '1000', 'NST', '2020-07-15T13:30:00.000Z'],
    ['20200715', '', '', '2020-07-15T00:00:00.000Z'], // a date alone is midnight UTC
    ['20200715', '0', 'PDT', '2020-07-15T00:00:00.000Z'],
  ])('sale date %s %s %s -> %s', (date, time, zone, expected) => {
    expect(copartSaleDate(date, time, zone)).toEqual(expected);
  });

  it.each([
    ['20200230', '1200', 'PDT', /not a real date/],
    ['15/07/2020', '1200', 'PDT', /not a real date/],
    ['yesterday', '1200', 'PDT', /is not a date/],
    ['20200715', '2460', 'PDT', /not a real date/],
    ['20200715', '12:00', 'PDT', /is not a time/],
    ['20200715', '1200', '', /has no Time Zone/],
    ['20200715', '1200', 'Mars', /not one this importer knows/],
  ])('refuses sale date %s %s %s', (date, time, zone, message) => {
    const result = copartSaleDate(date, time, zone);
    expect(result).toEqual({ problem: expect.stringMatching(message) });
  });

  it('writes odometer brands and title types as words, and keeps codes it does not know', () => {
    expect([odometerBrand('A'), odometerBrand('n'), odometerBrand('E'), odometerBrand('T'), odometerBrand(' ')]).toEqual([
      'Actual', 'Not actual', 'Exempt', 'T', null,
    ]);
    expect(titleDocument('SC', 'CA')).toBe('Salvage certificate (CA)');
    expect(titleDocument('ct', 'tx')).toBe('Certificate of title (TX)');
    expect(titleDocument('NR', '')).toBe('Non-repairable');
    expect(titleDocument('SV', 'NY')).toBe('SV (NY)');
    expect(titleDocument('', 'NY')).toBeNull();
  });
});
