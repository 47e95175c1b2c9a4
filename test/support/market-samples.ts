import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Lot } from '../../src/domain/lot.ts';
import { checkVin } from '../../src/domain/vin.ts';
import { makeLot } from './fixtures.ts';

const DAY = 24 * 60 * 60 * 1000;
const DAMAGES = ['FRONT END', 'REAR END', 'SIDE', 'HAIL', 'MINOR DENT/SCRATCHES'];

interface Listing {
  vin: string;
  price: number;
  year: number;
  mileage: number;
}

/**
 * Real Ford F-150 listings of model years 2018 to 2020 from the AuctionExport file
 * (test/fixtures/usa-cars/usa-cars-full.csv: real VINs, prices and mileage), with a valid VIN and
 * a price, in file order.
 */
function f150Listings(): Listing[] {
  const text = readFileSync(fileURLToPath(new URL('../fixtures/usa-cars/usa-cars-full.csv', import.meta.url)), 'utf8');
  return text
    .split(/\r?\n/)
    .slice(1)
    .map((line) => line.split(','))
    .filter((cells) => cells[2] === 'ford' && cells[3] === 'f-150' && ['2018', '2019', '2020'].includes(cells[4]!) && Number(cells[1]) > 0)
    .map((cells) => ({ vin: cells[8]!.trim().toUpperCase(), price: Number(cells[1]), year: Number(cells[4]), mileage: Number(cells[6]) }))
    .filter((listing) => checkVin(listing.vin).ok);
}

export interface MarketSample {
  /** The report's vehicle: a 2019 F-150 with two sales, about 2 and 8 months before `asOf`. */
  vehicle: Lot[];
  /** Its comparables: other F-150s of 2018-2020 sold in the 12 months before `asOf`. */
  comparables: Lot[];
}

/**
 * The market of a 2019 Ford F-150 as of `asOf`: real listings, given what the file lacks (crafted):
 * sale dates spread over the 12 months before `asOf`, a primary damage, a retail value and an
 * auction. `count` comparables (at most the file's 190 or so).
 */
export function f150Market(asOf: Date, count: number): MarketSample {
  const listings = f150Listings();
  const own = listings.find((listing) => listing.year === 2019)!;
  const others = listings.filter((listing) => listing.vin !== own.vin).slice(0, count);
  const lot = (listing: Listing, index: number, saleDate: Date, price: number): Lot =>
    makeLot({
      vin: listing.vin,
      auction: index % 3 === 0 ? 'iaai' : 'copart',
      brand: 'FORD',
      model: 'F-150',
      year: listing.year,
      name: `${listing.year} FORD F-150`,
      sale_date: saleDate.toISOString(),
      price,
      odometer: listing.mileage,
      primary_damage: DAMAGES[index % DAMAGES.length]!,
      retail_value: Math.round(listing.price / (0.45 + (index % 5) * 0.1)),
    });
  return {
    vehicle: [
      lot(own, 1, new Date(asOf.getTime() - 61.5 * DAY), Math.round(own.price * 0.8)),
      lot(own, 2, new Date(asOf.getTime() - 243.5 * DAY), own.price),
    ],
    comparables: others.map((listing, index) => lot(listing, index, new Date(asOf.getTime() - (3 + ((index * 37) % 355)) * DAY), listing.price)),
  };
}
