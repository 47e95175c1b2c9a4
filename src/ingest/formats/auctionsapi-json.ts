import type { Lot } from '../../domain/lot.ts';
import type { FieldError } from '../normalise-lot.ts';
import { absoluteUrl, cleanText, isProblem, sentenceCase, titleCase, wholeNumberOrUnknown } from '../values.ts';
import type { MappedRecord } from './copart-csv.ts';

/**
 * The vehicle records of a commercial auction-data API (the shape of
 * test/fixtures/auctionsapi/sample-car.json): one vehicle with its facts as named objects
 * (`{"id": 16, "name": "BMW"}`) and its auction lots in `lots`. Each lot becomes one Lot; the
 * vehicle's facts go into every one of them. docs/import-formats.md has the mapping.
 */
type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A vehicle record rather than a canonical lot: it carries its lots in an array. */
export function isAuctionsApiRecord(value: unknown): boolean {
  return isObject(value) && Array.isArray(value.lots) && !('lot_id' in value);
}

function field(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (!isObject(current)) return undefined;
    current = current[key];
  }
  return current;
}

/** `{"name": "sedan"}` -> "sedan"; a plain string as it is; anything else unknown. */
function nameOf(value: unknown): string | null {
  if (typeof value === 'string') return cleanText(value);
  if (isObject(value) && typeof value.name === 'string') return cleanText(value.name);
  return null;
}

const DRIVES: Record<string, string> = {
  all: 'All wheel drive',
  front: 'Front wheel drive',
  rear: 'Rear wheel drive',
  full: '4x4',
};

const CONDITIONS: Record<string, string> = {
  run_and_drives: 'Run & Drive',
  starts: 'Starts',
  engine_starts: 'Starts',
  stationary: 'Stationary',
  enhanced: 'Enhanced vehicle',
};

/** "iaai_com" -> "iaai", "copart_com" -> "copart". */
function auctionOf(domain: string | null): string | null {
  if (domain === null) return null;
  return /^[a-z][a-z0-9-]*/i.exec(domain)?.[0].toLowerCase() ?? domain;
}

/** The photo list: the vendor's re-hosted copies first, then the other sizes it may list. */
function imagesOf(images: unknown): string[] {
  const lists = isObject(images) ? ['downloaded', 'big', 'normal', 'small'].map((key) => images[key]) : [images];
  for (const list of lists) {
    if (!Array.isArray(list) || list.length === 0) continue;
    return (list as unknown[]).map((item) => (typeof item === 'string' ? absoluteUrl(item) : item)).filter((item) => item !== null) as string[];
  }
  return [];
}

/** "2015 BMW 328I xDrive" -> "BMW 328I xDrive": the year has its own field. */
function nameWithoutYear(title: string | null, year: unknown): string | null {
  if (title === null) return null;
  const prefix = `${String(year)} `;
  return cleanText(typeof year === 'number' && title.startsWith(prefix) ? title.slice(prefix.length) : title);
}

function keysOf(value: unknown): string | null {
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  return nameOf(value);
}

export function lotsFromAuctionsApiRecord(record: Json): MappedRecord[] {
  const lots = Array.isArray(record.lots) ? record.lots : [];
  const vehicle = {
    vin: record.vin,
    year: record.year,
    brand: nameOf(record.manufacturer),
    model: nameOf(record.model),
    name: nameWithoutYear(nameOf(record.title), record.year),
    body: sentenceCase(nameOf(record.body_type)),
    color: sentenceCase(nameOf(record.color)),
    engine: nameOf(record.engine),
    transmission: sentenceCase(nameOf(record.transmission)),
    drive: ((name) => (name === null ? null : (DRIVES[name.toLowerCase()] ?? sentenceCase(name))))(nameOf(record.drive_wheel)),
    type: sentenceCase(nameOf(record.vehicle_type)),
    fuel: sentenceCase(nameOf(record.fuel)),
    cylinders: record.cylinders ?? null,
  };
  return lots.map((entry): MappedRecord => {
    const lot = isObject(entry) ? entry : {};
    const problems: FieldError[] = [];
    const amount = (name: keyof Lot, value: unknown): number | null => {
      const number = wholeNumberOrUnknown(typeof value === 'number' || typeof value === 'string' ? value : null);
      if (!isProblem(number)) return number;
      problems.push({ field: name, message: number.problem });
      return null;
    };
    const condition = nameOf(lot.condition);
    const city = titleCase(nameOf(field(lot, 'location', 'city')));
    const state = nameOf(field(lot, 'location', 'state', 'code'))?.toUpperCase() ?? titleCase(nameOf(field(lot, 'location', 'state')));
    const zip = field(lot, 'location', 'zip') ?? field(lot, 'location', 'postal_code');
    const raw: MappedRecord['raw'] = {
      ...vehicle,
      // `id` is the vendor's own row; `lot` is the lot number at the auction.
      lot_id: lot.lot ?? null,
      auction: auctionOf(nameOf(lot.domain)),
      odometer: amount('odometer', field(lot, 'odometer', 'mi')),
      odometer_type: sentenceCase(nameOf(field(lot, 'odometer', 'status'))),
      repair_cost: amount('repair_cost', lot.estimate_repair_price),
      retail_value: amount('retail_value', lot.actual_cash_value),
      // `bid` is the standing bid and `buy_now` an offer; only a final bid is a price the lot made.
      price: amount('price', lot.final_bid),
      sale_date: lot.sale_date ?? null,
      document: nameOf(lot.title),
      primary_damage: nameOf(field(lot, 'damage', 'main')),
      secondary_damage: nameOf(field(lot, 'damage', 'second')),
      highlight: condition === null ? null : (CONDITIONS[condition.toLowerCase()] ?? sentenceCase(condition)),
      keys: keysOf(lot.keys),
      location: city === null ? null : state ? `${city}, ${state}` : city,
      location_zip: typeof zip === 'string' ? cleanText(zip) : null,
      images: imagesOf(lot.images),
    };
    if (raw.auction === null) problems.push({ field: 'auction', message: 'the lot names no auction (domain.name)' });
    return { raw, problems };
  });
}
