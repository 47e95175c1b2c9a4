import { createWriteStream } from 'node:fs';
import type { Lot } from '../../src/domain/lot.ts';

// Synthetic lots written as Copart's 59-column sales-data CSV, for the import and CSV benchmarks.

export const COPART_HEADER = [
  'Id', 'Yard number', 'Yard name', 'Sale Date M/D/CY', 'Day of Week', 'Sale time (HHMM)', 'Time Zone', 'Item#', 'Lot number',
  'Vehicle Type', 'Year', 'Make', 'Model Group', 'Model Detail', 'Body Style', 'Color', 'Damage Description', 'Secondary Damage',
  'Sale Title State', 'Sale Title Type', 'Has Keys-Yes or No', 'Lot Cond. Code', 'VIN', 'Odometer', 'Odometer Brand',
  'Est. Retail Value', 'Repair cost', 'Engine', 'Drive', 'Transmission', 'Fuel Type', 'Cylinders', 'Runs/Drives', 'Sale Status',
  'High Bid =non-vix,Sealed=Vix', 'Special Note', 'Location city', 'Location state', 'Location ZIP', 'Location country',
  'Currency Code', 'Image Thumbnail', 'Create Date/Time', 'Grid/Row', 'Make-an-Offer Eligible', 'Buy-It-Now Price', 'Image URL',
  'Trim', 'Last Updated Time', 'Rentals', 'Copart Select', 'Seller Name', 'Offsite Address1', 'Offsite State', 'Offsite City',
  'Offsite Zip', 'Sale Light', 'AutoGrade', 'Announcements',
];
const TITLE_CODES: Record<string, string> = { 'SALVAGE CERTIFICATE': 'SC', 'CERTIFICATE OF TITLE': 'CT', 'NON-REPAIRABLE': 'NR' };
const BRAND_CODES: Record<string, string> = { ACTUAL: 'A', 'NOT ACTUAL': 'N', EXEMPT: 'E' };
const central = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/Chicago', hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', timeZoneName: 'short',
});

// eslint-disable-next-line @typescript-eslint/no-base-to-string -- the values are a lot's fields: strings, numbers, booleans.
export const quote = (value: unknown) => `"${value === null || value === undefined ? '' : String(value).replace(/"/g, '""')}"`;
const amount = (value: number | null) => (value === null ? '0.0' : `${value}.0`);

/** One synthetic lot as a row of Copart's layout (a Copart lot number of its own, so that none collide). */
export function copartRow(lot: Lot, index: number): string {
  const place = /^([A-Z]{2}) - (.+)$/.exec(lot.location ?? '') ?? /^(.+) \(([A-Z]{2})\)$/.exec(lot.location ?? '');
  const [state, city] = place ? (place[1]!.length === 2 ? [place[1]!, place[2]!] : [place[2]!, place[1]!.toUpperCase()]) : ['', ''];
  const title = /^([A-Z]{2}) - (.+)$/.exec(lot.document ?? '');
  let date = '0';
  let time = '';
  let zone = '';
  if (lot.sale_date) {
    const parts = Object.fromEntries(central.formatToParts(new Date(lot.sale_date)).map((part) => [part.type, part.value]));
    date = `${parts.year}${parts.month}${parts.day}`;
    time = `${parts.hour}${parts.minute}`;
    zone = parts.timeZoneName!;
  }
  const values = [
    index + 1, '', lot.location, date, '', time, zone, 0, 10_000_000 + ((index * 7_919_071 + 12_345) % 90_000_000),
    'V', lot.year, lot.brand, lot.model, lot.configuration ?? lot.model, lot.body, lot.color, lot.primary_damage, lot.secondary_damage,
    title?.[1] ?? '', title ? (TITLE_CODES[title[2]!] ?? title[2]) : '', lot.keys, 'D', lot.vin, amount(lot.odometer),
    lot.odometer_type ? (BRAND_CODES[lot.odometer_type] ?? lot.odometer_type) : '', amount(lot.retail_value), amount(lot.repair_cost),
    lot.engine, lot.drive, lot.transmission, lot.fuel, lot.cylinders ?? 0, lot.highlight ?? 'DEFAULT', 'Pure Sale', amount(lot.price), '',
    city, state, lot.location_zip, 'USA', 'USD', lot.images[0]?.replace(/^https?:\/\//, '') ?? '', '2025-12-01-10.50.12.000197', 'AA001',
    'N', '0.0', `http://inventory.copart.io/v1/lotImages/${lot.lot_id}?country=us&brand=cprt&yardNumber=1`, lot.configuration,
    '2025-12-02T07:01:00Z', 'N', 'N', '', '', '', '', '', 'G', '', '',
  ];
  return values.map(quote).join(',');
}

export async function writeLines(file: string, lines: Iterable<string>): Promise<void> {
  const out = createWriteStream(file);
  let buffer = '';
  for (const line of lines) {
    buffer += `${line}\n`;
    if (buffer.length >= 1 << 20) {
      if (!out.write(buffer)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      buffer = '';
    }
  }
  out.end(buffer);
  await new Promise<void>((resolve, reject) => out.on('finish', resolve).on('error', reject));
}

