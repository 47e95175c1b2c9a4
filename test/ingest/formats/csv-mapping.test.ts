import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadCsvMapping, parseCsvMapping, type CsvMapping } from '../../../src/ingest/formats/csv-mapping.ts';
import { IngestError } from '../../../src/ingest/ingest-error.ts';
import { fixture, lotsOf, readPrepared, rejectionsOf, streamOf } from '../helpers.ts';

const EXAMPLE = fileURLToPath(new URL('../../../examples/usa-cars.mapping.json', import.meta.url));

describe('CSV through a mapping file: the shipped example on the AuctionExport listings', () => {
  it('maps the quirks of the sample: lower-case VINs with spaces, the 13-character VIN, a repeated lot, a price of 0', async () => {
    const mapping = await loadCsvMapping(EXAMPLE);
    const result = await readPrepared(fixture('usa-cars/usa-cars-subset.csv'), { mapping });
    expect(result.description).toBe('CSV through a mapping (13 columns)');
    expect(result.failure).toBeNull();
    const lots = lotsOf(result);
    expect(lots).toHaveLength(41);
    expect(lots[0]).toEqual({
      vin: 'JTEZU11F88K007763',
      body: null,
      fuel: null,
      keys: null,
      name: 'TOYOTA CRUISER',
      type: null,
      year: 2008,
      brand: 'TOYOTA',
      color: 'BLACK',
      drive: null,
      model: 'CRUISER',
      price: 6300,
      engine: null,
      lot_id: 159348797,
      auction: 'auctionexport',
      document: 'Clean title',
      location: 'New Jersey',
      odometer: 274117,
      cylinders: null,
      highlight: null,
      sale_date: null,
      repair_cost: null,
      location_zip: null,
      retail_value: null,
      transmission: null,
      configuration: null,
      odometer_type: null,
      primary_damage: null,
      secondary_damage: null,
      images: [],
    });
    expect(rejectionsOf(result)).toEqual([{ line: 34, reason: 'vin: The vin must be exactly 17 characters; got 13.' }]);
    // The lot listed twice arrives twice; the upsert makes it one (tested with the CLI).
    expect(lots.filter((lot) => lot.lot_id === 167650632)).toHaveLength(2);
    expect(lots.at(-1)).toMatchObject({ lot_id: 167650636, price: null, document: 'Salvage title (insurance loss)' });
  });

  it('reads the whole real file: 2,499 rows, one refused', async () => {
    const result = await readPrepared(fixture('usa-cars/usa-cars-full.csv'), { mapping: await loadCsvMapping(EXAMPLE) });
    expect(result.prepared).toHaveLength(2499);
    expect(rejectionsOf(result)).toEqual([{ line: 34, reason: 'vin: The vin must be exactly 17 characters; got 13.' }]);
    expect(lotsOf(result).filter((lot) => lot.price === null)).toHaveLength(43);
  });

  it('refuses the file without a mapping, naming its columns', async () => {
    await expect(readPrepared(fixture('usa-cars/usa-cars-subset.csv'))).rejects.toThrow(
      'a CSV with columns "id", "price", "brand", "model", "year", "title_status", "mileage", "color", ... is not a layout this importer knows: give a mapping file with --map (docs/import-formats.md)',
    );
  });
});

describe('mapping transforms', () => {
  const mapping = (fields: CsvMapping['fields'], extra: Partial<CsvMapping> = {}) => parseCsvMapping({ fields: { vin: 'VIN', lot_id: 'Stock', auction: { value: 'manheim' }, ...fields }, ...extra });
  const VIN = '1HGCV1F3XLA012873';

  it('applies constants, templates, value maps, numbers, dates in a zone and image lists', async () => {
    const csv = [
      'VIN;Stock;Make;Model;Sold;Photos;Bid;Miles;Title',
      `${VIN};1001;honda;accord sport;03/16/2021 11:00;cs.example.com/a.jpg| https://cs.example.com/b.jpg ;"$11,200.00";0;SALV`,
      `${VIN};1002;honda;accord;07/04/2024 09:30;;;"1,234.6";`,
    ].join('\n');
    const m = mapping(
      {
        brand: { column: 'Make', transform: ['upper'] },
        name: { template: '{Make} {Model}', transform: ['title-case'] },
        sale_date: { column: 'Sold', date: { format: 'MM/DD/YYYY HH:mm', zone: 'America/Los_Angeles' } },
        images: { column: 'Photos', split: '|', transform: ['absolute-url'] },
        price: { column: 'Bid', transform: ['number', 'zero-is-null'] },
        odometer: { column: 'Miles', transform: ['number', 'zero-is-null'] },
        document: { column: 'Title', map: { salv: 'Salvage title', CLN: 'Clean title' } },
        type: { value: null },
      },
      { delimiter: ';' },
    );
    const result = await readPrepared(streamOf(csv), { mapping: m });
    expect(rejectionsOf(result)).toEqual([]);
    expect(lotsOf(result).map(({ brand, name, sale_date, images, price, odometer, document, auction, lot_id }) => ({ brand, name, sale_date, images, price, odometer, document, auction, lot_id }))).toEqual([
      {
        brand: 'HONDA',
        name: 'Honda Accord Sport',
        sale_date: '2021-03-16T18:00:00.000Z', // PDT
        images: ['https://cs.example.com/a.jpg', 'https://cs.example.com/b.jpg'],
        price: 11200,
        odometer: null,
        document: 'Salvage title',
        auction: 'manheim',
        lot_id: 1001,
      },
      {
        brand: 'HONDA',
        name: 'Honda Accord',
        sale_date: '2024-07-04T16:30:00.000Z',
        images: [],
        price: null,
        odometer: 1235,
        document: null,
        auction: 'manheim',
        lot_id: 1002,
      },
    ]);
  });

  it('skips a row whose values the mapping cannot convert, naming the field', async () => {
    const m = mapping({ price: { column: 'Bid', transform: ['number'] }, sale_date: { column: 'Sold', date: { format: 'YYYY-MM-DD', zone: 'UTC' } } });
    const csv = `VIN,Stock,Bid,Sold\n${VIN},1,abc,2024-02-30\n${VIN},2,100,2024-02-28\n`;
    const result = await readPrepared(streamOf(csv), { mapping: m });
    expect(rejectionsOf(result)).toEqual([
      { line: 2, reason: 'price: must be a number of 0 or more; got "abc"; sale_date: "2024-02-30" is not a real date and time' },
    ]);
    expect(lotsOf(result)).toEqual([expect.objectContaining({ lot_id: 2, price: 100, sale_date: '2024-02-28T00:00:00.000Z' })]);
  });

  it('refuses a file that lacks a column the mapping names, before reading a row', async () => {
    const m = mapping({ price: 'Price' });
    await expect(readPrepared(streamOf(`VIN,Stock,Cost\n${VIN},1,5\n`), { mapping: m })).rejects.toThrow(
      new IngestError('refused', 'the mapping takes price from the column "Price", which this file does not have; its columns are "VIN", "Stock", "Cost"'),
    );
  });

  it.each([
    [{ fields: { vin: 'v', lot_id: 'l', auction: 'a', odometr: 'o' } }, /"odometr" is not a Lot field/],
    [{ fields: { vin: 'v', lot_id: 'l' } }, /every lot needs auction/],
    [{ fields: { vin: 'v', lot_id: 'l', auction: { column: 'a', value: 'x' } } }, /fields.auction needs exactly one of column, template or value/],
    [{ fields: { vin: 'v', lot_id: 'l', auction: 'a', price: { column: 'p', transform: ['double'] } } }, /\/fields\/price/],
    [{ fields: { vin: 'v', lot_id: 'l', auction: 'a', name: { column: 'n', split: ',' } } }, /split is for images only/],
    [{ fields: { vin: 'v', lot_id: 'l', auction: 'a', sale_date: { column: 'd', date: { format: 'DD.MM.YYYY', zone: 'Mars/Olympus' } } } }, /not a known time zone/],
    [{ fields: { vin: 'v', lot_id: 'l', auction: 'a', sale_date: { column: 'd', date: { format: 'HH:mm', zone: 'UTC' } } } }, /needs a year \(YYYY\)/],
    [{ fields: {}, columns: {} }, /Unexpected property|\/columns/],
  ])('refuses a bad mapping %#', (value, message) => {
    expect(() => parseCsvMapping(value)).toThrow(message);
  });

  it('names the file of a mapping that is not JSON', async () => {
    const file = fixture('copart/bot-wall.csv');
    await expect(loadCsvMapping(file)).rejects.toThrow(`${file} is not JSON`);
  });

  it('the shipped example is valid and documented', () => {
    const example = JSON.parse(readFileSync(EXAMPLE, 'utf8')) as CsvMapping;
    expect(() => parseCsvMapping(example)).not.toThrow();
    expect(example.description).toMatch(/USA_cars_datasets\.csv/);
  });
});
