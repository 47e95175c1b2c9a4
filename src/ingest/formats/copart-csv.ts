import type { Lot } from '../../domain/lot.ts';
import { KNOWN_ZONE_ABBREVIATIONS, localToUtcIso } from '../local-time.ts';
import type { FieldError } from '../normalise-lot.ts';
import { absoluteUrl, cleanText, isProblem, wholeNumberOrUnknown, type FieldProblem } from '../values.ts';

/**
 * Copart's member sales-data CSV (docs/import-formats.md has the mapping). Columns are found by
 * header name, so the 49-column layout and the newer 59-column one (ten columns added after
 * "Last Updated Time") load alike, and so would a reordered one.
 */
const COLUMNS = {
  lotNumber: 'lot number',
  vin: 'vin',
  year: 'year',
  make: 'make',
  modelGroup: 'model group',
  modelDetail: 'model detail',
  trim: 'trim',
  vehicleType: 'vehicle type',
  bodyStyle: 'body style',
  color: 'color',
  damage: 'damage description',
  secondaryDamage: 'secondary damage',
  titleState: 'sale title state',
  titleType: 'sale title type',
  hasKeys: 'has keys-yes or no',
  odometer: 'odometer',
  odometerBrand: 'odometer brand',
  retailValue: 'est. retail value',
  repairCost: 'repair cost',
  engine: 'engine',
  drive: 'drive',
  transmission: 'transmission',
  fuel: 'fuel type',
  cylinders: 'cylinders',
  runsDrives: 'runs/drives',
  city: 'location city',
  state: 'location state',
  zip: 'location zip',
  currency: 'currency code',
  thumbnail: 'image thumbnail',
  saleDate: 'sale date m/d/cy',
  saleTime: 'sale time (hhmm)',
  timeZone: 'time zone',
} as const;

type Column = keyof typeof COLUMNS;

const headerKey = (name: string) => name.replace(/^\uFEFF/, '').replace(/\s+/g, ' ').trim().toLowerCase();

/** A header with Copart's lot number and VIN, and one of the columns only its layout has. */
export function isCopartHeader(header: readonly string[]): boolean {
  const names = new Set(header.map(headerKey));
  return names.has(COLUMNS.lotNumber) && names.has(COLUMNS.vin) && (names.has(COLUMNS.saleDate) || names.has('yard number'));
}

export function describeCopartLayout(header: readonly string[]): string {
  return `Copart sales-data CSV (${header.length} columns)`;
}

const ODOMETER_BRANDS: Record<string, string> = { A: 'Actual', N: 'Not actual', E: 'Exempt' };
const TITLE_TYPES: Record<string, string> = { SC: 'Salvage certificate', CT: 'Certificate of title', NR: 'Non-repairable' };
const VEHICLE_TYPES: Record<string, string> = { V: 'Automobile' };

/** "SC" + "CA" -> "Salvage certificate (CA)"; an unknown code is kept as given: "XX (CA)". */
export function titleDocument(type: string | null, state: string | null): string | null {
  const code = cleanText(type);
  if (code === null) return null;
  const words = TITLE_TYPES[code.toUpperCase()] ?? code;
  const issuer = cleanText(state);
  return issuer === null ? words : `${words} (${issuer.toUpperCase()})`;
}

export function odometerBrand(code: string | null): string | null {
  const text = cleanText(code);
  return text === null ? null : (ODOMETER_BRANDS[text.toUpperCase()] ?? text);
}

function keysWord(value: string | null): string | null {
  const text = cleanText(value);
  if (text === null) return null;
  const upper = text.toUpperCase();
  if (upper === 'YES' || upper === 'Y') return 'Yes';
  if (upper === 'NO' || upper === 'N') return 'No';
  return text;
}

/** "DEFAULT" is Copart's placeholder for a lot nobody has checked: no highlight, not a condition. */
function runsDrives(value: string | null): string | null {
  const text = cleanText(value);
  return text === null || text.toUpperCase() === 'DEFAULT' ? null : text;
}

const COMPACT_DATE = /^(\d{4})(\d{2})(\d{2})$/;
const SLASHED_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * `Sale Date M/D/CY` (20261002, 10/2/2026; 0 when the lot has no sale date yet), `Sale time (HHMM)`
 * (1200, 930) and `Time Zone` (PDT, EST, ...) as one UTC instant. A date without a time is midnight
 * UTC, as in the canonical format; a time in a zone this importer does not know is refused rather
 * than guessed.
 */
export function copartSaleDate(date: string | null, time: string | null, zone: string | null): string | null | FieldProblem {
  const dateText = cleanText(date);
  if (dateText === null || dateText === '0') return null;
  const match = COMPACT_DATE.exec(dateText) ?? ISO_DATE.exec(dateText);
  const slashed = match ? null : SLASHED_DATE.exec(dateText);
  if (!match && !slashed) return { problem: `Sale Date ${JSON.stringify(dateText)} is not a date (expected YYYYMMDD or M/D/YYYY, or 0)` };
  const [year, month, day] = match
    ? [Number(match[1]), Number(match[2]), Number(match[3])]
    : [Number(slashed![3]), Number(slashed![1]), Number(slashed![2])];
  const timeText = cleanText(time);
  let hour = 0;
  let minute = 0;
  let zoneName = 'UTC';
  if (timeText !== null && timeText !== '0') {
    if (!/^\d{1,4}$/.test(timeText)) return { problem: `Sale time ${JSON.stringify(timeText)} is not a time (expected HHMM)` };
    const digits = timeText.padStart(4, '0');
    hour = Number(digits.slice(0, 2));
    minute = Number(digits.slice(2));
    const zoneText = cleanText(zone);
    if (zoneText === null) return { problem: `Sale time ${timeText} has no Time Zone` };
    if (!KNOWN_ZONE_ABBREVIATIONS.includes(zoneText.toUpperCase())) {
      return { problem: `Time Zone ${JSON.stringify(zoneText)} is not one this importer knows (${KNOWN_ZONE_ABBREVIATIONS.join(', ')})` };
    }
    zoneName = zoneText;
  }
  const iso = localToUtcIso({ year, month, day, hour, minute }, zoneName);
  if (isProblem(iso)) return { problem: `Sale Date ${dateText} ${timeText ?? ''} ${iso.problem}`.replace(/\s+/g, ' ') };
  return iso;
}

export interface MappedRecord {
  raw: Partial<Record<keyof Lot, unknown>>;
  problems: FieldError[];
}

/** Compiles the header into a function from a row's values to a lot-shaped record. */
export function copartRowMapper(header: readonly string[]): (values: readonly string[]) => MappedRecord {
  const index = new Map<string, number>();
  header.forEach((name, i) => {
    const key = headerKey(name);
    if (!index.has(key)) index.set(key, i);
  });
  const position = {} as Record<Column, number | undefined>;
  for (const [column, name] of Object.entries(COLUMNS) as [Column, string][]) position[column] = index.get(name);

  // (The helpers take the row as an argument rather than closing over it: a closure made for
  // every row of a million-row file costs more than the mapping itself.)
  const get = (values: readonly string[], column: Column): string | null => {
    const at = position[column];
    return at === undefined ? null : (values[at] ?? null);
  };
  const number = (values: readonly string[], problems: FieldError[], field: keyof Lot, column: Column): number | null => {
    const value = wholeNumberOrUnknown(get(values, column));
    if (!isProblem(value)) return value;
    problems.push({ field, message: `${value.problem} (column ${JSON.stringify(header[position[column]!]?.trim())})` });
    return null;
  };

  return (values) => {
    const problems: FieldError[] = [];
    const make = cleanText(get(values, 'make'));
    const city = cleanText(get(values, 'city'));
    const state = cleanText(get(values, 'state'));
    const thumbnail = absoluteUrl(get(values, 'thumbnail'));
    const currency = cleanText(get(values, 'currency'));
    // The figures of Copart's sites outside the US are in their own currency; stored as dollars
    // they would be wrong, so they are left unknown.
    const dollars = currency === null || currency.toUpperCase() === 'USD';
    const saleDate = copartSaleDate(get(values, 'saleDate'), get(values, 'saleTime'), get(values, 'timeZone'));
    if (isProblem(saleDate)) problems.push({ field: 'sale_date', message: saleDate.problem });
    const vehicleType = cleanText(get(values, 'vehicleType'));
    const raw: MappedRecord['raw'] = {
      vin: get(values, 'vin'),
      body: cleanText(get(values, 'bodyStyle')),
      fuel: cleanText(get(values, 'fuel')),
      keys: keysWord(get(values, 'hasKeys')),
      name: cleanText([make, cleanText(get(values, 'modelDetail')) ?? cleanText(get(values, 'modelGroup'))].filter(Boolean).join(' ')),
      type: vehicleType === null ? null : (VEHICLE_TYPES[vehicleType.toUpperCase()] ?? vehicleType),
      year: number(values, problems, 'year', 'year'),
      brand: make,
      color: cleanText(get(values, 'color')),
      drive: cleanText(get(values, 'drive')),
      model: cleanText(get(values, 'modelGroup')),
      // "High Bid" is the bid standing when the file was made, not what the lot sold for.
      price: null,
      engine: cleanText(get(values, 'engine')),
      lot_id: cleanText(get(values, 'lotNumber')),
      auction: 'copart',
      document: titleDocument(get(values, 'titleType'), get(values, 'titleState')),
      location: city === null ? null : state === null ? city : `${city}, ${state}`,
      odometer: number(values, problems, 'odometer', 'odometer'),
      cylinders: number(values, problems, 'cylinders', 'cylinders'),
      highlight: runsDrives(get(values, 'runsDrives')),
      sale_date: isProblem(saleDate) ? null : saleDate,
      repair_cost: dollars ? number(values, problems, 'repair_cost', 'repairCost') : null,
      location_zip: cleanText(get(values, 'zip')),
      retail_value: dollars ? number(values, problems, 'retail_value', 'retailValue') : null,
      transmission: cleanText(get(values, 'transmission')),
      configuration: cleanText(get(values, 'trim')),
      odometer_type: odometerBrand(get(values, 'odometerBrand')),
      primary_damage: cleanText(get(values, 'damage')),
      secondary_damage: cleanText(get(values, 'secondaryDamage')),
      // "Image URL" is an API address listing the lot's photos, not a photo: only the thumbnail is one.
      images: thumbnail === null ? [] : [thumbnail],
    };
    return { raw, problems };
  };
}
