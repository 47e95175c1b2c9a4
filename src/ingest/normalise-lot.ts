import { FormatRegistry, KindGuard, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { LOT_FIELDS, LotSchema, MAX_IMAGE_URL_CHARS, MAX_IMAGES, type Lot } from '../domain/lot.ts';
import { checkVin } from '../domain/vin.ts';

/**
 * Turns one lot-shaped raw record into a Lot, or says which fields are wrong. Lenient about form
 * (surrounding spaces, numeric strings, any ISO 8601 offset, absent optional fields), strict about
 * meaning (a bad VIN, a fractional price or a relative image URL rejects the record: loading it
 * would put wrong data in front of customers).
 */
export interface FieldError {
  field: string;
  message: string;
}

export type NormaliseResult = { ok: true; lot: Lot } | { ok: false; errors: FieldError[] };

export { MAX_INTEGER } from '../domain/lot.ts';
const AUCTION_PATTERN = /^[a-z][a-z0-9_-]*$/;

type FieldResult = { value: unknown } | { error: string };
type FieldRule = (value: unknown) => FieldResult;

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Trimmed text; absent, null and blank mean unknown. */
function optionalText(value: unknown): FieldResult {
  if (value === undefined || value === null) return { value: null };
  // A number is refused rather than converted: "02134" sent as 2134 has already lost its zero.
  if (typeof value !== 'string') return { error: `must be a string; got ${show(value)}` };
  const text = value.trim();
  return { value: text === '' ? null : text };
}

/** Trimmed text of at most `maxLength` characters (the schema's limit). */
function boundedText(maxLength: number): FieldRule {
  return (value) => {
    const text = optionalText(value);
    if ('value' in text && text.value !== null && (text.value as string).length > maxLength) {
      return { error: tooLong(maxLength, (text.value as string).length) };
    }
    return text;
  };
}

const tooLong = (maxLength: number, length: number) => `must be at most ${maxLength} characters; got ${length}`;

/** A whole number within the schema's range. */
function integer(field: keyof Lot, schema: { minimum?: number; maximum?: number }, required: boolean): FieldRule {
  const { minimum: min, maximum: max } = schema;
  if (min === undefined || max === undefined) throw new Error(`normalise-lot: the Lot field "${field}" has no range in LotSchema`);
  return (value) => {
    let number: number;
    if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
      return required ? { error: 'is required' } : { value: null };
    }
    if (typeof value === 'number') number = value;
    else if (typeof value === 'string' && /^\s*\+?\d+\s*$/.test(value)) number = Number(value);
    else return { error: `must be a whole number; got ${show(value)}` };
    if (!Number.isInteger(number)) return { error: `must be a whole number; got ${show(value)}` };
    if (number < min || number > max) return { error: `must be from ${min} to ${max}; got ${show(value)}` };
    return { value: number };
  };
}

function vin(value: unknown): FieldResult {
  if (value === undefined || value === null) return { error: 'is required' };
  if (typeof value !== 'string') return { error: `must be a string; got ${show(value)}` };
  const check = checkVin(value);
  return check.ok ? { value: check.vin } : { error: check.errors.join(' ') };
}

const auctionText = boundedText(LotSchema.properties.auction.maxLength!);

function auction(value: unknown): FieldResult {
  const text = auctionText(value);
  if ('error' in text) return text;
  if (text.value === null) return { error: 'is required' };
  const word = (text.value as string).toLowerCase();
  if (!AUCTION_PATTERN.test(word)) {
    return { error: `must be one word of letters, digits, - and _ (such as copart or iaai); got ${show(value)}` };
  }
  return { value: word };
}

// Extended ISO 8601 (RFC 3339 also allows a space for the T): a date alone, or a date-time with an offset.
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

// The stored form itself, which most records of a bulk load already carry: checked by a round trip.
const CANONICAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Any ISO 8601 date-time with an offset, as UTC with milliseconds; a date alone is midnight UTC. */
export function normaliseSaleDate(value: unknown): FieldResult {
  const text = optionalText(value);
  if ('error' in text || text.value === null) return text;
  if (CANONICAL_DATE_TIME.test(text.value as string)) {
    const date = new Date(text.value as string);
    // A date that does not exist (February 30th) rolls over, so the round trip tells it apart.
    if (!Number.isNaN(date.getTime()) && date.toISOString() === text.value) return text;
  }
  const expected = 'must be an ISO 8601 date-time with a time zone, such as 2024-05-01T15:00:00Z';
  const match = ISO_DATE_TIME.exec(text.value as string);
  if (!match) return { error: `${expected}; got ${show(value)}` };
  const [, y, mo, d, h, mi, s, fraction, zone] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h ?? 0);
  const minute = Number(mi ?? 0);
  const second = Number(s ?? 0);
  // A local time without an offset could be any of 38 zones: guessing would shift sales by hours.
  if (h !== undefined && zone === undefined) return { error: `${expected} (the time zone is missing); got ${show(value)}` };
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    return { error: `is not a real date and time; got ${show(value)}` };
  }
  let offsetMinutes = 0;
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const hours = Number(digits.slice(0, 2));
    const minutes = Number(digits.slice(2) || '0');
    if (hours > 23 || minutes > 59) return { error: `has an impossible time-zone offset; got ${show(value)}` };
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
  }
  const millis = Number((fraction ?? '').padEnd(3, '0').slice(0, 3));
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not read years 0-99 as 1900-1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  return { value: new Date(date.getTime() - offsetMinutes * 60_000).toISOString() };
}

/**
 * The common shape of an image URL (http(s), an ASCII host name, printable ASCII after it): always
 * a valid absolute URL, recognised without running the URL parser, which is the costliest step of
 * normalising a lot with ten photos.
 */
const PLAIN_HTTP_URL = /^https?:\/\/[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?:[/?#][!-~]*)?$/;

function isHttpUrl(text: string): boolean {
  if (PLAIN_HTTP_URL.test(text)) return true;
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
}

function images(value: unknown): FieldResult {
  if (value === undefined || value === null) return { value: [] };
  if (!Array.isArray(value)) return { error: `must be an array of absolute http(s) URLs; got ${show(value)}` };
  if (value.length > MAX_IMAGES) return { error: `must hold at most ${MAX_IMAGES} URLs; got ${value.length}` };
  const urls: string[] = [];
  for (const [index, item] of value.entries()) {
    const text = typeof item === 'string' ? item.trim() : null;
    if (text !== null && text.length > MAX_IMAGE_URL_CHARS) return { error: `item ${index} ${tooLong(MAX_IMAGE_URL_CHARS, text.length)}` };
    if (text === null || !isHttpUrl(text)) {
      return { error: `item ${index} must be an absolute http(s) URL; got ${show(item)}` };
    }
    if (!urls.includes(text)) urls.push(text);
  }
  return { value: urls };
}

/** The rule of each field, derived from LotSchema so that a field added there cannot be forgotten here. */
function ruleFor(field: keyof Lot, schema: TSchema): FieldRule {
  switch (field) {
    case 'vin':
      return vin;
    case 'auction':
      return auction;
    case 'sale_date':
      return normaliseSaleDate;
    case 'images':
      return images;
  }
  if (KindGuard.IsInteger(schema)) return integer(field, schema, true);
  if (KindGuard.IsUnion(schema)) {
    const [kind, ...rest] = schema.anyOf.filter((member) => !KindGuard.IsNull(member));
    if (rest.length === 0 && kind !== undefined && KindGuard.IsInteger(kind)) return integer(field, kind, false);
    if (rest.length === 0 && kind !== undefined && KindGuard.IsString(kind) && kind.format === undefined && kind.maxLength !== undefined) {
      return boundedText(kind.maxLength);
    }
  }
  throw new Error(`normalise-lot: no normalisation rule for the Lot field "${field}"`);
}

const RULES = new Map<string, FieldRule>(
  LOT_FIELDS.map((field) => [field, ruleFor(field, LotSchema.properties[field] as TSchema)]),
);

// TypeBox knows no formats until they are registered; these match the normalised forms above.
if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set('date-time', (value) => !Number.isNaN(Date.parse(value)) && /T.*(Z|[+-]\d{2}:\d{2})$/i.test(value));
}
if (!FormatRegistry.Has('uri')) FormatRegistry.Set('uri', (value) => URL.canParse(value));
/**
 * The drift guard checks the shape (every field, its type, the auction pattern) but not the
 * formats, nor for extra properties: the rules above have just validated every date and URL and
 * built the object from the Lot's own field list, and checking those again took a third of the
 * time of normalising a lot.
 */
const LotCheck = TypeCompiler.Compile(forDriftGuard(LotSchema));

/** A deep copy without the keywords named above, keeping TypeBox's symbol-keyed Kind markers. */
function forDriftGuard<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(forDriftGuard) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<PropertyKey, unknown> = {};
  for (const key of Reflect.ownKeys(schema)) {
    if (key !== 'format' && key !== 'additionalProperties') copy[key] = forDriftGuard((schema as Record<PropertyKey, unknown>)[key]);
  }
  return copy as T;
}

export function normaliseLot(raw: unknown): NormaliseResult {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { ok: false, errors: [{ field: '(record)', message: `must be an object; got ${show(raw)}` }] };
  }
  const record = raw as Record<string, unknown>;
  const errors: FieldError[] = [];
  const lot: Record<string, unknown> = {};
  for (const [field, rule] of RULES) {
    const result = rule(record[field]);
    if ('error' in result) errors.push({ field, message: result.error });
    else lot[field] = result.value;
  }
  // An unknown name is most often a misspelt one; ignoring it would silently drop that value.
  for (const name of Object.keys(record)) {
    if (!RULES.has(name)) errors.push({ field: name, message: 'is not a Lot field' });
  }
  if (errors.length > 0) return { ok: false, errors };
  // The rules above are meant to produce exactly LotSchema; this guards the database against drift.
  if (!LotCheck.Check(lot)) {
    return {
      ok: false,
      errors: [...LotCheck.Errors(lot)].map((error) => ({ field: error.path.replace(/^\//, '') || '(record)', message: error.message })),
    };
  }
  return { ok: true, lot: lot };
}

/** `vin: ...; price: ...`: one line a person can act on. */
export function describeFieldErrors(errors: readonly FieldError[]): string {
  return errors.map((error) => `${error.field}: ${error.message}`).join('; ');
}
