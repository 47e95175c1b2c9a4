import { readFile } from 'node:fs/promises';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { LOT_FIELDS, type Lot } from '../../domain/lot.ts';
import { isKnownZone, localToUtcIso } from '../local-time.ts';
import type { FieldError } from '../normalise-lot.ts';
import { absoluteUrl, cleanText, isProblem, sentenceCase, titleCase, wholeNumber, type FieldProblem } from '../values.ts';
import type { MappedRecord } from './copart-csv.ts';

/**
 * Any other CSV, through a mapping file: for each Lot field, the column it comes from (or a
 * template of columns, or a constant), with a few simple transforms. The format is documented in
 * docs/import-formats.md; examples/usa-cars.mapping.json is a complete example.
 */
const TRANSFORMS = ['upper', 'lower', 'title-case', 'sentence-case', 'number', 'zero-is-null', 'absolute-url'] as const;
type Transform = (typeof TRANSFORMS)[number];

const FieldSpecSchema = Type.Union([
  Type.String({ minLength: 1, description: 'The column the value comes from.' }),
  Type.Object(
    {
      column: Type.Optional(Type.String({ minLength: 1 })),
      template: Type.Optional(Type.String({ minLength: 1, description: 'Columns in braces: "{brand} {model}".' })),
      value: Type.Optional(Type.Union([Type.String(), Type.Integer(), Type.Null()], { description: 'A constant.' })),
      transform: Type.Optional(Type.Array(Type.Union(TRANSFORMS.map((name) => Type.Literal(name))))),
      map: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]))),
      date: Type.Optional(
        Type.Object(
          {
            format: Type.String({ minLength: 1, description: 'Tokens YYYY MM M DD D HH H mm ss; other characters literal.' }),
            zone: Type.String({ minLength: 1, description: 'UTC, an offset (+02:00), an abbreviation (EST) or an IANA name.' }),
          },
          { additionalProperties: false },
        ),
      ),
      split: Type.Optional(Type.String({ minLength: 1, description: 'images only: the separator of a list of URLs in one cell.' })),
    },
    { additionalProperties: false },
  ),
]);

export const CsvMappingSchema = Type.Object(
  {
    description: Type.Optional(Type.String()),
    delimiter: Type.Optional(Type.String({ minLength: 1, maxLength: 1 })),
    fields: Type.Record(Type.String(), FieldSpecSchema),
  },
  { additionalProperties: false },
);

export type CsvMapping = Static<typeof CsvMappingSchema>;
type FieldSpec = Static<typeof FieldSpecSchema>;

export class MappingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MappingError';
  }
}

const REQUIRED: (keyof Lot)[] = ['vin', 'auction', 'lot_id'];
const lotFields = new Set<string>(LOT_FIELDS);

/** Checks a parsed mapping file, saying what is wrong in terms of the file. */
export function parseCsvMapping(value: unknown, origin = 'the mapping'): CsvMapping {
  if (!Value.Check(CsvMappingSchema, value)) {
    const first = [...Value.Errors(CsvMappingSchema, value)][0];
    throw new MappingError(`${origin}: ${first ? `${first.path || '/'}: ${first.message}` : 'not a mapping'} (see docs/import-formats.md)`);
  }
  const mapping = value;
  const unknown = Object.keys(mapping.fields).filter((name) => !lotFields.has(name));
  if (unknown.length > 0) throw new MappingError(`${origin}: ${unknown.map((name) => JSON.stringify(name)).join(', ')} ${unknown.length === 1 ? 'is not a Lot field' : 'are not Lot fields'}`);
  const missing = REQUIRED.filter((name) => !(name in mapping.fields));
  if (missing.length > 0) throw new MappingError(`${origin}: every lot needs ${missing.join(', ')}; the mapping does not say where ${missing.length === 1 ? 'it comes' : 'they come'} from`);
  for (const [name, spec] of Object.entries(mapping.fields)) {
    if (typeof spec === 'string') continue;
    const sources = ['column', 'template', 'value'].filter((key) => key in spec);
    if (sources.length !== 1) throw new MappingError(`${origin}: fields.${name} needs exactly one of column, template or value`);
    if (spec.split !== undefined && name !== 'images') throw new MappingError(`${origin}: fields.${name}: split is for images only`);
    if (spec.date !== undefined) {
      if (name !== 'sale_date') throw new MappingError(`${origin}: fields.${name}: date is for sale_date only`);
      if (!isKnownZone(spec.date.zone)) throw new MappingError(`${origin}: fields.sale_date.date.zone ${JSON.stringify(spec.date.zone)} is not a known time zone`);
      compileDateFormat(spec.date.format);
    }
  }
  return mapping;
}

export async function loadCsvMapping(file: string): Promise<CsvMapping> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new MappingError(`cannot read the mapping file ${file}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new MappingError(`${file} is not JSON: ${(error as Error).message}`);
  }
  return parseCsvMapping(json, file);
}

interface DateFormat {
  pattern: RegExp;
  parts: string[];
}

const DATE_TOKENS = /YYYY|MM|M|DD|D|HH|H|mm|ss/g;

function compileDateFormat(format: string): DateFormat {
  const parts: string[] = [];
  let source = '';
  let last = 0;
  for (const match of format.matchAll(DATE_TOKENS)) {
    source += format.slice(last, match.index).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const token = match[0];
    parts.push(token);
    source += token === 'YYYY' ? '(\\d{4})' : token.length === 2 ? '(\\d{2})' : '(\\d{1,2})';
    last = match.index + token.length;
  }
  source += format.slice(last).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (!parts.includes('YYYY') || !(parts.includes('MM') || parts.includes('M')) || !(parts.includes('DD') || parts.includes('D'))) {
    throw new MappingError(`the date format ${JSON.stringify(format)} needs a year (YYYY), a month (MM or M) and a day (DD or D)`);
  }
  return { pattern: new RegExp(`^${source}$`), parts };
}

function parseDate(text: string, format: DateFormat, zone: string): string | FieldProblem {
  const match = format.pattern.exec(text);
  if (!match) return { problem: `${JSON.stringify(text)} does not match the date format` };
  const value: Record<string, number> = {};
  format.parts.forEach((part, i) => (value[part[0]!] = Number(match[i + 1])));
  const hasTime = 'H' in value;
  const time = { year: value.Y!, month: value.M!, day: value.D!, hour: value.H ?? 0, minute: value.m ?? 0, second: value.s ?? 0 };
  // A date without a time is midnight UTC, as in the canonical format.
  const iso = localToUtcIso(time, hasTime ? zone : 'UTC');
  return isProblem(iso) ? { problem: `${JSON.stringify(text)} ${iso.problem}` } : iso;
}

function applyTransform(value: string | number | null, transform: Transform): string | number | null | FieldProblem {
  if (value === null) return null;
  if (typeof value === 'number') {
    if (transform === 'zero-is-null') return value === 0 ? null : value;
    return value;
  }
  switch (transform) {
    case 'upper':
      return value.toUpperCase();
    case 'lower':
      return value.toLowerCase();
    case 'title-case':
      return titleCase(value);
    case 'sentence-case':
      return sentenceCase(value);
    case 'number':
      return wholeNumber(value);
    case 'zero-is-null':
      return /^[\s$0.,]*$/.test(value) && /0/.test(value) ? null : value;
    case 'absolute-url':
      return absoluteUrl(value);
  }
}

type Getter = (values: readonly string[]) => string | null;

/** Compiles the mapping against a file's header into a function from a row to a lot-shaped record. */
export function csvMappingRowMapper(mapping: CsvMapping, header: readonly string[]): (values: readonly string[]) => MappedRecord {
  const positions = new Map<string, number>();
  header.forEach((name, i) => {
    const key = name.replace(/^\uFEFF/, '').trim().toLowerCase();
    if (!positions.has(key)) positions.set(key, i);
  });
  const column = (name: string, field: string): Getter => {
    const at = positions.get(name.trim().toLowerCase());
    if (at === undefined) {
      throw new MappingError(`the mapping takes ${field} from the column ${JSON.stringify(name)}, which this file does not have; its columns are ${header.map((h) => JSON.stringify(h.trim())).join(', ')}`);
    }
    return (values) => cleanText(values[at]);
  };

  const fields = Object.entries(mapping.fields).map(([name, spec]) => {
    const field = name as keyof Lot;
    const full: Exclude<FieldSpec, string> = typeof spec === 'string' ? { column: spec } : spec;
    let get: Getter;
    if (full.column !== undefined) get = column(full.column, name);
    else if (full.template !== undefined) {
      const pieces = full.template.split(/(\{[^}]+\})/).map((piece) => {
        const inner = /^\{([^}]+)\}$/.exec(piece);
        return inner ? column(inner[1]!, name) : () => piece;
      });
      get = (values) => cleanText(pieces.map((piece) => piece(values) ?? '').join(''));
    } else {
      const constant = full.value ?? null;
      get = () => (constant === null ? null : String(constant));
    }
    const map = full.map ? new Map(Object.entries(full.map).map(([from, to]) => [from.trim().toLowerCase(), to])) : null;
    const transforms = full.transform ?? [];
    const date = full.date ? { format: compileDateFormat(full.date.format), zone: full.date.zone } : null;

    const convert = (text: string | null): unknown => {
      let value: string | number | null = text;
      if (value !== null && map) {
        const mapped = map.get(value.toLowerCase());
        if (mapped !== undefined) value = mapped;
      }
      for (const transform of transforms) {
        const next = applyTransform(value, transform);
        if (isProblem(next)) return next;
        value = next;
      }
      if (date && typeof value === 'string') return parseDate(value, date.format, date.zone);
      return value;
    };

    const read = (values: readonly string[]): unknown => {
      const text = get(values);
      if (field !== 'images') return convert(text);
      if (text === null) return [];
      const items = full.split === undefined ? [text] : text.split(full.split);
      const urls: unknown[] = [];
      for (const item of items) {
        const url = convert(cleanText(item));
        if (isProblem(url)) return url;
        if (url !== null) urls.push(url);
      }
      return urls;
    };
    // A constant is the same on every row: a typo in it is the mapping's fault, found before row 1.
    if (full.value !== undefined) {
      const constant = read([]);
      if (isProblem(constant)) throw new MappingError(`fields.${name}: ${constant.problem}`);
    }
    return { field, read };
  });

  return (values) => {
    const raw: MappedRecord['raw'] = {};
    const problems: FieldError[] = [];
    for (const { field, read } of fields) {
      const value = read(values);
      if (isProblem(value)) {
        problems.push({ field, message: value.problem });
        raw[field] = null;
      } else raw[field] = value;
    }
    return { raw, problems };
  };
}
