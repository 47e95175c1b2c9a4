import { Type, type Static } from '@sinclair/typebox';

/**
 * The Lot object of the spec. Every field is always present; an unknown value is null, never
 * omitted (contract, Responses). This one schema validates imports, types the code, serialises
 * responses and documents the API.
 */
const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });
const NullableInteger = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description });

export const LotSchema = Type.Object(
  {
    vin: Type.String({ description: 'VIN of the vehicle.', examples: ['4JGBF7BE5AA585531'] }),
    body: NullableString('Body type description.'),
    fuel: NullableString('Fuel type.'),
    keys: NullableString('Whether keys are present.'),
    name: NullableString('Full vehicle name (brand, model, trim).'),
    type: NullableString('Vehicle type category.'),
    year: NullableInteger('Model year.'),
    brand: NullableString('Manufacturer name.'),
    color: NullableString('Color.'),
    drive: NullableString('Drive type.'),
    model: NullableString('Model name.'),
    price: NullableInteger('Price amount (US dollars).'),
    engine: NullableString('Engine description.'),
    lot_id: Type.Integer({ description: 'Lot identifier at the auction.' }),
    auction: Type.String({ description: 'Auction identifier (lower-case word).', pattern: '^[a-z][a-z0-9_-]*$' }),
    document: NullableString('Title or document type of the lot.'),
    location: NullableString('Lot location (city).'),
    odometer: NullableInteger('Odometer reading.'),
    cylinders: NullableInteger('Number of cylinders.'),
    highlight: NullableString('Condition highlight of the lot.'),
    sale_date: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'Date of sale, ISO 8601 date-time in UTC.',
    }),
    repair_cost: NullableInteger('Estimated repair cost (US dollars).'),
    location_zip: NullableString('Postal code of the lot location.'),
    retail_value: NullableInteger('Estimated retail value (US dollars).'),
    transmission: NullableString('Transmission type.'),
    configuration: NullableString('Trim or configuration.'),
    odometer_type: NullableString('Kind of odometer reading.'),
    primary_damage: NullableString('Primary damage area.'),
    secondary_damage: NullableString('Secondary damage area.'),
    images: Type.Array(Type.String({ format: 'uri' }), { description: 'Absolute image URLs.' }),
  },
  { $id: 'Lot', additionalProperties: false, title: 'Lot' },
);

export type Lot = Static<typeof LotSchema>;

/** Field order of the spec's table; used wherever a lot is written out field by field. */
export const LOT_FIELDS = Object.keys(LotSchema.properties) as (keyof Lot)[];

/** Newest sale first; lots with an unknown sale date last; ties in a stable, documented order. */
export function compareLotsNewestFirst(a: Lot, b: Lot): number {
  if (a.sale_date !== b.sale_date) {
    if (a.sale_date === null) return 1;
    if (b.sale_date === null) return -1;
    return a.sale_date < b.sale_date ? 1 : -1;
  }
  if (a.auction !== b.auction) return a.auction < b.auction ? -1 : 1;
  return b.lot_id - a.lot_id;
}
