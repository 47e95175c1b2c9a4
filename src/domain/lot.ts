import { Type, type Static } from '@sinclair/typebox';

/**
 * The Lot object of the spec. Every field is always present; an unknown value is null, never
 * omitted (contract, Responses). This one schema validates imports, types the code, serialises
 * responses and documents the API.
 *
 * It also holds the bounds of a lot, here and nowhere else: imports skip a record past any of them
 * (naming the field and its limit), so that one hostile record cannot make every search of its VIN
 * answer megabytes. Text limits are generous beside the real feeds (Copart's longest text is under
 * 40 characters, its image URLs under 100); docs/import-formats.md lists them.
 */
const NullableString = (description: string, maxLength: number) =>
  Type.Union([Type.String({ maxLength }), Type.Null()], { description: `${description} At most ${maxLength} characters.` });
const NullableInteger = (description: string, minimum: number, maximum: number) =>
  Type.Union([Type.Integer({ minimum, maximum }), Type.Null()], { description: `${description} From ${minimum} to ${maximum}.` });

/** The columns are PostgreSQL `integer`: a larger value would fail the whole batch, not the line. */
export const MAX_INTEGER = 2_147_483_647;
/** Words and short phrases: a colour, a damage area, a title type. */
const SHORT_TEXT = 200;
/** Names and descriptions: a full vehicle name, an engine, a location. */
const LONG_TEXT = 300;
export const MAX_IMAGES = 100;
export const MAX_IMAGE_URL_CHARS = 2048;

export const LotSchema = Type.Object(
  {
    vin: Type.String({ description: 'VIN of the vehicle.', examples: ['4JGBF7BE5AA585531'], maxLength: 17 }),
    body: NullableString('Body type description.', SHORT_TEXT),
    fuel: NullableString('Fuel type.', SHORT_TEXT),
    keys: NullableString('Whether keys are present.', SHORT_TEXT),
    name: NullableString('Full vehicle name (brand, model, trim).', LONG_TEXT),
    type: NullableString('Vehicle type category.', SHORT_TEXT),
    // The first production car is from 1886; a "year" outside this range is another field misplaced.
    year: NullableInteger('Model year.', 1886, 2100),
    brand: NullableString('Manufacturer name.', SHORT_TEXT),
    color: NullableString('Color.', SHORT_TEXT),
    drive: NullableString('Drive type.', SHORT_TEXT),
    model: NullableString('Model name.', LONG_TEXT),
    price: NullableInteger('Price amount (US dollars).', 0, MAX_INTEGER),
    engine: NullableString('Engine description.', LONG_TEXT),
    lot_id: Type.Integer({ description: 'Lot identifier at the auction.', minimum: 0, maximum: MAX_INTEGER }),
    auction: Type.String({ description: 'Auction identifier (lower-case word).', pattern: '^[a-z][a-z0-9_-]*$', maxLength: 40 }),
    document: NullableString('Title or document type of the lot.', SHORT_TEXT),
    location: NullableString('Lot location (city).', LONG_TEXT),
    // Seven digits: what an odometer shows; more is a typo or another field misplaced.
    odometer: NullableInteger('Odometer reading.', 0, 9_999_999),
    // W16 is the most a production engine has had.
    cylinders: NullableInteger('Number of cylinders.', 0, 32),
    highlight: NullableString('Condition highlight of the lot.', LONG_TEXT),
    sale_date: Type.Union([Type.String({ format: 'date-time', maxLength: 40 }), Type.Null()], {
      description: 'Date of sale, ISO 8601 date-time in UTC.',
    }),
    repair_cost: NullableInteger('Estimated repair cost (US dollars).', 0, MAX_INTEGER),
    location_zip: NullableString('Postal code of the lot location.', 20),
    retail_value: NullableInteger('Estimated retail value (US dollars).', 0, MAX_INTEGER),
    transmission: NullableString('Transmission type.', SHORT_TEXT),
    configuration: NullableString('Trim or configuration.', LONG_TEXT),
    odometer_type: NullableString('Kind of odometer reading.', SHORT_TEXT),
    primary_damage: NullableString('Primary damage area.', SHORT_TEXT),
    secondary_damage: NullableString('Secondary damage area.', SHORT_TEXT),
    images: Type.Array(Type.String({ format: 'uri', maxLength: MAX_IMAGE_URL_CHARS }), {
      description: `Absolute image URLs: at most ${MAX_IMAGES}, each at most ${MAX_IMAGE_URL_CHARS} characters.`,
      maxItems: MAX_IMAGES,
    }),
  },
  { $id: 'Lot', additionalProperties: false, title: 'Lot' },
);

export type Lot = Static<typeof LotSchema>;

/** Field order of the spec's table; used wherever a lot is written out field by field. */
export const LOT_FIELDS = Object.keys(LotSchema.properties) as (keyof Lot)[];

/**
 * A lot as the API's JSON text, its fields in LOT_FIELDS order: what the lots store answers a
 * search with (built by the database from the row), spliced unparsed into the answer and into the
 * report's snapshot. Parsing and serialising it again cost a search more than reading it
 * (docs/benchmarks.md, "Measured choices on the search path").
 */
export type LotJson = string & { readonly __lotJson: unique symbol };

/** A lot object as LotJson, fields in LOT_FIELDS order (sandbox lots, archived photos, replays). */
export function lotJson(lot: Lot): LotJson {
  const ordered: Record<string, unknown> = {};
  for (const field of LOT_FIELDS) ordered[field] = lot[field];
  return JSON.stringify(ordered) as LotJson;
}

/** The fields that order a vehicle's lots. */
export type LotOrderKey = Pick<Lot, 'sale_date' | 'auction' | 'lot_id'>;

/** Newest sale first; lots with an unknown sale date last; ties in a stable, documented order. */
export function compareLotsNewestFirst(a: LotOrderKey, b: LotOrderKey): number {
  if (a.sale_date !== b.sale_date) {
    if (a.sale_date === null) return 1;
    if (b.sale_date === null) return -1;
    return a.sale_date < b.sale_date ? 1 : -1;
  }
  if (a.auction !== b.auction) return a.auction < b.auction ? -1 : 1;
  return b.lot_id - a.lot_id;
}
