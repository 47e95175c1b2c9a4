import type { Lot } from '../../domain/lot.ts';
import type { StoredReport } from '../../domain/report.ts';
import {
  cleanText,
  formatAuction,
  formatDate,
  formatDateTime,
  formatInteger,
  formatMiles,
  formatMoney,
  isoInstant,
} from '../format.ts';

/** A labelled value; null means unknown, which the template shows as a dash. */
export interface Field {
  label: string;
  value: string | null;
  /** A line under the value, e.g. the kind of odometer reading. */
  note?: string;
}

/** A group of known values only: the page leaves out rows nobody reported. */
export interface FieldGroup {
  title: string;
  fields: Field[];
}

export interface Photo {
  /** What the page shows: the archive's thumbnail when there is one. */
  src: string;
  /** What the photo opens: the full image (the archived copy when there is one). */
  href: string;
  alt: string;
}

/** An image URL of a snapshot to what the page shows and opens (the photo archive's resolver). */
export type PhotoResolver = (url: string) => { src: string; href: string };

const AS_IS: PhotoResolver = (url) => ({ src: url, href: url });

export interface LotView {
  /** Fragment id, so that one lot of a report can be linked to. */
  anchor: string;
  auction: string;
  lotId: string;
  /** The vehicle as this lot names it, when it says more than the page heading. */
  name: string | null;
  saleDate: { text: string; datetime: string | null } | null;
  /** Sale price, odometer, retail value and repair cost: always all four, for comparing lots. */
  figures: Field[];
  details: FieldGroup[];
  photos: Photo[];
}

export interface ReportView {
  id: string;
  vin: string;
  /** `2010 MERCEDES-BENZ GL 450`, or null when no lot names the vehicle. */
  vehicleName: string | null;
  vehicleFacts: Field[];
  madeAt: { text: string; datetime: string | null };
  lotCount: string;
  lots: LotView[];
}

/** The newest lot's value of a field (lots are stored newest first): the freshest description. */
function newest<K extends keyof Lot>(lots: Lot[], field: K): NonNullable<Lot[K]> | null {
  for (const lot of lots) {
    const value = lot[field];
    if (value === null || value === undefined) continue;
    if (typeof value === 'string' && cleanText(value) === null) continue;
    return value as NonNullable<Lot[K]>;
  }
  return null;
}

function vehicleName(year: number | null, name: string | null, brand: string | null, model: string | null): string | null {
  // The spec's name is the full name (brand, model, trim); brand and model are the fallback.
  const base = name ?? ([brand, model].filter((part) => part !== null).join(' ') || null);
  if (base === null) return year === null ? null : String(year);
  if (year === null || base.includes(String(year))) return base;
  return `${year} ${base}`;
}

function known(fields: Field[]): Field[] {
  return fields.filter((field) => field.value !== null);
}

function joinKnown(parts: (string | null)[], separator: string): string | null {
  const present = parts.filter((part): part is string => part !== null);
  return present.length > 0 ? present.join(separator) : null;
}

/**
 * Only web links reach the page: an image "URL" such as javascript: or a relative path would
 * otherwise become a live href under our origin.
 */
export function isWebUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

function presentLot(lot: Lot, pageName: string | null, photo: PhotoResolver): LotView {
  const auction = formatAuction(lot.auction);
  const lotId = String(lot.lot_id);
  const saleText = formatDate(lot.sale_date);
  const lotName = vehicleName(lot.year, cleanText(lot.name), cleanText(lot.brand), cleanText(lot.model));
  const sources = lot.images.filter(isWebUrl);
  const odometerType = cleanText(lot.odometer_type);
  const figures: Field[] = [
    { label: 'Sale price', value: formatMoney(lot.price) },
    { label: 'Odometer', value: formatMiles(lot.odometer), ...(odometerType && lot.odometer !== null ? { note: odometerType } : {}) },
    { label: 'Retail value', value: formatMoney(lot.retail_value) },
    { label: 'Repair cost', value: formatMoney(lot.repair_cost) },
  ];
  const details: FieldGroup[] = [
    {
      title: 'Condition and title',
      fields: known([
        { label: 'Primary damage', value: cleanText(lot.primary_damage) },
        { label: 'Secondary damage', value: cleanText(lot.secondary_damage) },
        { label: 'Highlight', value: cleanText(lot.highlight) },
        { label: 'Keys', value: cleanText(lot.keys) },
        { label: 'Title document', value: cleanText(lot.document) },
        // A reading type without a reading would float alone; it is shown under the figure otherwise.
        ...(lot.odometer === null ? [{ label: 'Odometer type', value: odometerType }] : []),
        { label: 'Location', value: joinKnown([cleanText(lot.location), cleanText(lot.location_zip)], ', ') },
      ]),
    },
    {
      title: 'Vehicle',
      fields: known([
        { label: 'Engine', value: cleanText(lot.engine) },
        { label: 'Cylinders', value: formatInteger(lot.cylinders) },
        { label: 'Transmission', value: cleanText(lot.transmission) },
        { label: 'Drive', value: cleanText(lot.drive) },
        { label: 'Fuel', value: cleanText(lot.fuel) },
        { label: 'Body', value: cleanText(lot.body) },
        { label: 'Color', value: cleanText(lot.color) },
      ]),
    },
  ].filter((group) => group.fields.length > 0);

  return {
    anchor: `lot-${lot.auction}-${lotId}`,
    auction,
    lotId,
    name: lotName !== null && lotName !== pageName ? lotName : null,
    saleDate: saleText === null ? null : { text: saleText, datetime: isoInstant(lot.sale_date) },
    figures,
    details,
    photos: sources.map((url, index) => ({
      ...photo(url),
      alt: `Photo ${index + 1} of ${sources.length}, ${auction} lot ${lotId}`,
    })),
  };
}

/**
 * The view model of a report page: everything formatted, unknown values null and empty groups
 * dropped, so that the template only lays it out.
 */
export function presentReport(report: StoredReport, photo: PhotoResolver = AS_IS): ReportView {
  const { lots } = report;
  const year = newest(lots, 'year');
  const brand = cleanText(newest(lots, 'brand'));
  const model = cleanText(newest(lots, 'model'));
  const name = vehicleName(year, cleanText(newest(lots, 'name')), brand, model);
  return {
    id: report.id,
    vin: report.vin,
    vehicleName: name,
    vehicleFacts: known([
      { label: 'Year', value: year === null ? null : String(year) },
      { label: 'Make', value: brand },
      { label: 'Model', value: model },
      { label: 'Trim', value: cleanText(newest(lots, 'configuration')) },
      { label: 'Type', value: cleanText(newest(lots, 'type')) },
    ]),
    madeAt: { text: formatDateTime(report.createdAt), datetime: isoInstant(report.createdAt) },
    lotCount: lots.length === 1 ? '1 auction lot' : `${formatInteger(lots.length)} auction lots`,
    lots: lots.map((lot) => presentLot(lot, name, photo)),
  };
}

/** The page's <title>: the vehicle first, as that is what a reader scans tabs and history for. */
export function reportTitle(view: ReportView): string {
  return view.vehicleName ? `${view.vehicleName} · VIN ${view.vin} · auction history` : `VIN ${view.vin} · auction history`;
}
