import { CATALOGUE_SORTS, type CatalogueFilter, type CataloguePosition, type CatalogueSort } from '../domain/catalogue.ts';
import { MAX_INTEGER } from '../domain/lot.ts';
import { marketKey } from '../domain/market-key.ts';
import type { MarketSubject } from '../domain/market.ts';
import { checkVin } from '../domain/vin.ts';

/**
 * The query strings of GET /api/v1/lots and GET /api/v1/market read by hand, parameter by
 * parameter (contract: a bad parameter is 422 with errors.<parameter>, an unknown one too), into
 * their checked, normalised form and one canonical text: two calls ask "the same query" of the
 * Idempotency-Key rule when their canonical texts are equal.
 */

export type Refusal = { ok: false; field: string; messages: string[] };
type Checked<T> = { ok: true; value: T } | Refusal;

/** The most characters of a make, model, damage or document value. */
export const MAX_NAME_CHARS = 100;
export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;
export const MAX_CURSOR_CHARS = 200;
const MAX_ZIP_CHARS = 20;

export const CATALOGUE_PARAMETERS = [
  'make', 'model', 'primary_damage', 'document', 'auction', 'year_min', 'year_max', 'odometer_max', 'price_min', 'price_max',
  'sale_from', 'sale_to', 'status', 'location_zip', 'vin', 'sort', 'limit', 'cursor',
] as const;
export const MARKET_PARAMETERS = ['vin', 'make', 'model', 'year', 'primary_damage', 'months'] as const;

export interface CatalogueQuery {
  filter: CatalogueFilter;
  sort: CatalogueSort;
  limit: number;
  after: CataloguePosition | null;
  canonical: string;
}

export interface MarketQuery {
  subject: MarketSubject;
  primaryDamage: string | null;
  months: number;
  canonical: string;
}

const refuse = (field: string, ...messages: string[]): Refusal => ({ ok: false, field, messages });

/** Each parameter once, every one known: the values by name, or the refusal. */
function readParameters(params: URLSearchParams, known: readonly string[]): Checked<Map<string, string>> {
  const values = new Map<string, string>();
  for (const [name, value] of params) {
    const shown = name.length > 40 ? `${name.slice(0, 40)}...` : name;
    if (!known.includes(name)) return refuse(shown, `Unknown parameter ${shown}: this endpoint takes ${known.join(', ')}.`);
    if (values.has(name)) return refuse(name, `The ${name} parameter is given more than once.`);
    values.set(name, value);
  }
  return { ok: true, value: values };
}

function integer(name: string, raw: string, min: number, max: number): Checked<number> {
  const text = raw.trim();
  if (!/^\d{1,10}$/.test(text) || Number(text) < min || Number(text) > max) return refuse(name, `The ${name} must be a whole number from ${min} to ${max}.`);
  return { ok: true, value: Number(text) };
}

/** A make, model or damage: its key (domain/market-key.ts). */
function keyed(name: string, raw: string): Checked<string> {
  if (raw.length > MAX_NAME_CHARS) return refuse(name, `The ${name} must be at most ${MAX_NAME_CHARS} characters.`);
  const key = marketKey(raw);
  if (key === null) return refuse(name, `The ${name} must contain a letter or a digit.`);
  return { ok: true, value: key };
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** An ISO date or date-time as an instant in UTC; a date-only bound covers its whole UTC day. */
function saleBound(name: string, raw: string, end: boolean): Checked<string> {
  const text = raw.trim();
  const bad = refuse(name, `The ${name} must be an ISO 8601 date (2026-11-26) or date-time with a zone (2026-11-26T10:00:00Z).`);
  const day = DATE_ONLY.exec(text);
  const match = day ?? DATE_TIME.exec(text);
  if (match === null) return bad;
  // A real calendar day: Date would roll 2026-02-30 over into March.
  const [, y, m, d] = match;
  const calendar = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  if (calendar.getUTCFullYear() !== Number(y) || calendar.getUTCMonth() !== Number(m) - 1 || calendar.getUTCDate() !== Number(d)) return bad;
  if (day !== null) return { ok: true, value: `${text}T${end ? '23:59:59.999' : '00:00:00.000'}Z` };
  const at = Date.parse(text);
  return Number.isNaN(at) ? bad : { ok: true, value: new Date(at).toISOString() };
}

const MASKED_VIN = /^([0-9A-HJ-NPR-Z]{11,16})\*+$/;

function vinFilter(raw: string): Checked<NonNullable<CatalogueFilter['vin']>> {
  const text = raw.trim().toUpperCase();
  if (text.includes('*')) {
    const masked = MASKED_VIN.exec(text);
    if (text.length !== 17 || masked === null) {
      return refuse('vin', 'A masked vin is 17 characters: at least the first 11 known (0-9 A-H J-N P R-Z), the unknown rest * (5N1DL0MM5KC******).');
    }
    return { ok: true, value: { kind: 'masked', prefix: masked[1]! } };
  }
  const check = checkVin(text);
  return check.ok ? { ok: true, value: { kind: 'whole', vin: check.vin } } : refuse('vin', ...check.errors);
}

/** A page's position as the cursor the next page is asked with: base64url of its sort and position. */
export function encodeCatalogueCursor(sort: CatalogueSort, position: CataloguePosition): string {
  return Buffer.from(JSON.stringify([sort, position.value, position.auction, position.lotId]), 'utf8').toString('base64url');
}

function decodeCatalogueCursor(raw: string, sort: CatalogueSort): Checked<CataloguePosition> {
  const bad = refuse('cursor', 'The cursor is not one this endpoint gave, or was given for another sort; send the next_cursor of the previous page with the same parameters.');
  if (raw.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(raw)) return bad;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    return bad;
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) return bad;
  const [cursorSort, value, auction, lotId] = parsed as unknown[];
  const valueFits = sort.startsWith('price') ? Number.isSafeInteger(value) : typeof value === 'string' && value.length <= 40;
  if (cursorSort !== sort || !valueFits || typeof auction !== 'string' || auction.length > 40 || !Number.isSafeInteger(lotId)) return bad;
  return { ok: true, value: { value: value as string | number, auction, lotId: lotId as number } };
}

/** The catalogue's query (contract, "Catalogue search"), checked in the order of CATALOGUE_PARAMETERS. */
export function parseCatalogueQuery(params: URLSearchParams): CatalogueQuery | Refusal {
  const read = readParameters(params, CATALOGUE_PARAMETERS);
  if (!read.ok) return read;
  const values = read.value;
  const filter: CatalogueFilter = {
    makeKey: null, modelKey: null, damageKey: null, document: null, auction: null, yearMin: null, yearMax: null, odometerMax: null,
    priceMin: null, priceMax: null, saleFrom: null, saleTo: null, status: null, locationZip: null, vin: null,
  };
  const canonical: string[] = [];
  const note = (name: string, value: string | number) => canonical.push(`${name}=${encodeURIComponent(String(value))}`);
  const keys = { make: 'makeKey', model: 'modelKey', primary_damage: 'damageKey' } as const;
  for (const name of ['make', 'model', 'primary_damage'] as const) {
    const raw = values.get(name);
    if (raw === undefined) continue;
    const key = keyed(name, raw);
    if (!key.ok) return key;
    filter[keys[name]] = key.value;
    note(name, key.value);
  }
  const document = values.get('document');
  if (document !== undefined) {
    const text = document.trim().toLowerCase();
    if (text.length === 0 || text.length > MAX_NAME_CHARS) return refuse('document', `The document must be 1 to ${MAX_NAME_CHARS} characters.`);
    filter.document = text;
    note('document', text);
  }
  const auction = values.get('auction');
  if (auction !== undefined) {
    const text = auction.trim().toLowerCase();
    if (!/^[a-z][a-z0-9_-]{0,39}$/.test(text)) return refuse('auction', 'The auction must be a lower-case word (copart, iaai, ...).');
    filter.auction = text;
    note('auction', text);
  }
  const ranges = [
    ['year_min', 'yearMin', 1886, 2100],
    ['year_max', 'yearMax', 1886, 2100],
    ['odometer_max', 'odometerMax', 0, 9_999_999],
    ['price_min', 'priceMin', 0, MAX_INTEGER],
    ['price_max', 'priceMax', 0, MAX_INTEGER],
  ] as const;
  for (const [name, field, min, max] of ranges) {
    const raw = values.get(name);
    if (raw === undefined) continue;
    const checked = integer(name, raw, min, max);
    if (!checked.ok) return checked;
    filter[field] = checked.value;
    note(name, checked.value);
  }
  if (filter.yearMin !== null && filter.yearMax !== null && filter.yearMax < filter.yearMin) return refuse('year_max', 'The year_max must not be below year_min.');
  if (filter.priceMin !== null && filter.priceMax !== null && filter.priceMax < filter.priceMin) return refuse('price_max', 'The price_max must not be below price_min.');
  for (const [name, end] of [['sale_from', false], ['sale_to', true]] as const) {
    const raw = values.get(name);
    if (raw === undefined) continue;
    const checked = saleBound(name, raw, end);
    if (!checked.ok) return checked;
    filter[end ? 'saleTo' : 'saleFrom'] = checked.value;
    note(name, checked.value);
  }
  if (filter.saleFrom !== null && filter.saleTo !== null && filter.saleTo < filter.saleFrom) return refuse('sale_to', 'The sale_to must not be before sale_from.');
  const status = values.get('status');
  if (status !== undefined) {
    const text = status.trim().toLowerCase();
    if (text !== 'upcoming' && text !== 'sold') return refuse('status', 'The status must be upcoming (no sale date, or a future one) or sold (a sale date in the past).');
    filter.status = text;
    note('status', text);
  }
  const zip = values.get('location_zip');
  if (zip !== undefined) {
    const text = zip.trim().toUpperCase();
    if (text.length === 0 || text.length > MAX_ZIP_CHARS) return refuse('location_zip', `The location_zip must be 1 to ${MAX_ZIP_CHARS} characters.`);
    filter.locationZip = text;
    note('location_zip', text);
  }
  const vin = values.get('vin');
  if (vin !== undefined) {
    const checked = vinFilter(vin);
    if (!checked.ok) return checked;
    filter.vin = checked.value;
    note('vin', checked.value.kind === 'whole' ? checked.value.vin : `${checked.value.prefix}*`);
  }
  const sortText = values.get('sort')?.trim() ?? 'sale_date_desc';
  const sort = CATALOGUE_SORTS.find((name) => name === sortText);
  if (sort === undefined) return refuse('sort', `The sort must be one of ${CATALOGUE_SORTS.join(', ')}.`);
  note('sort', sort);
  let limit = DEFAULT_LIMIT;
  const rawLimit = values.get('limit');
  if (rawLimit !== undefined) {
    const checked = integer('limit', rawLimit, 1, MAX_LIMIT);
    if (!checked.ok) return checked;
    limit = checked.value;
  }
  note('limit', limit);
  let after: CataloguePosition | null = null;
  const cursor = values.get('cursor');
  if (cursor !== undefined) {
    const checked = decodeCatalogueCursor(cursor.trim(), sort);
    if (!checked.ok) return checked;
    after = checked.value;
    note('cursor', cursor.trim());
  }
  return { filter, sort, limit, after, canonical: canonical.join('&') };
}

/** The market's query (contract, "Market value"): a VIN, or a make, model and year; a damage and months. */
export function parseMarketQuery(params: URLSearchParams): MarketQuery | Refusal {
  const read = readParameters(params, MARKET_PARAMETERS);
  if (!read.ok) return read;
  const values = read.value;
  const canonical: string[] = [];
  const note = (name: string, value: string | number) => canonical.push(`${name}=${encodeURIComponent(String(value))}`);
  let subject: MarketSubject;
  const vin = values.get('vin');
  const byVehicle = ['make', 'model', 'year'].filter((name) => values.has(name));
  if (vin !== undefined) {
    if (byVehicle.length > 0) return refuse('vin', 'Give either vin, or make, model and year: not both.');
    const check = checkVin(vin);
    if (!check.ok) return refuse('vin', ...check.errors);
    subject = { kind: 'vin', vin: check.vin };
    note('vin', check.vin);
  } else {
    if (byVehicle.length === 0) return refuse('vin', 'Give vin, or make, model and year.');
    for (const name of ['make', 'model', 'year']) if (!values.has(name)) return refuse(name, `The ${name} parameter is required with ${byVehicle.join(' and ')} (or give vin instead).`);
    const make = values.get('make')!;
    const model = values.get('model')!;
    for (const [name, raw] of [['make', make], ['model', model]] as const) {
      const key = keyed(name, raw);
      if (!key.ok) return key;
      note(name, key.value);
    }
    const year = integer('year', values.get('year')!, 1886, 2100);
    if (!year.ok) return year;
    note('year', year.value);
    subject = { kind: 'vehicle', make: make.trim(), model: model.trim(), year: year.value };
  }
  let primaryDamage: string | null = null;
  const damage = values.get('primary_damage');
  if (damage !== undefined) {
    const key = keyed('primary_damage', damage);
    if (!key.ok) return key;
    primaryDamage = damage.trim();
    note('primary_damage', key.value);
  }
  let months = 12;
  const rawMonths = values.get('months');
  if (rawMonths !== undefined) {
    const checked = integer('months', rawMonths, 1, 36);
    if (!checked.ok) return checked;
    months = checked.value;
  }
  note('months', months);
  return { subject, primaryDamage, months, canonical: canonical.join('&') };
}
