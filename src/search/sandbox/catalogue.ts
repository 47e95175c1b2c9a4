import { compareLotsNewestFirst, LOT_FIELDS, type Lot } from '../../domain/lot.ts';

/**
 * The sandbox catalogue: the only vehicles a sandbox token (`vh_test_...`) can find. Fixed,
 * documented test data (README, docs/api.md), so that a customer can build and test a client
 * against every answer the API gives without spending quota: several lots, no lot (404), one lot
 * per auction, and a vehicle with every warning sign a report flags. Every VIN carries a valid
 * check digit; lot ids are from ranges the catalogue keeps for itself (copart 9000xxxx, iaai
 * 3900xxxx), so a sandbox lot lookup reads as a live one does.
 */
export interface SandboxVehicle {
  vin: string;
  /** What the vehicle is there to show. */
  purpose: string;
  lots: readonly Lot[];
}

type LotFacts = Partial<Lot> & Pick<Lot, 'auction' | 'lot_id'>;

function lotsOf(vin: string, common: Partial<Lot>, lots: LotFacts[]): Lot[] {
  const empty = Object.fromEntries(LOT_FIELDS.map((field) => [field, null])) as unknown as Lot;
  return lots.map((facts) => ({ ...empty, images: [], ...common, ...facts, vin })).sort(compareLotsNewestFirst);
}

const camry = {
  name: '2015 TOYOTA CAMRY LE',
  brand: 'TOYOTA',
  model: 'CAMRY',
  configuration: 'LE',
  year: 2015,
  body: 'SEDAN 4D',
  type: 'AUTOMOBILE',
  fuel: 'GAS',
  engine: '2.5L 4',
  cylinders: 4,
  drive: 'FRONT-WHEEL DRIVE',
  transmission: 'AUTOMATIC',
  color: 'SILVER',
} satisfies Partial<Lot>;

const altima = {
  name: '2015 NISSAN ALTIMA 2.5 S',
  brand: 'NISSAN',
  model: 'ALTIMA',
  configuration: '2.5 S',
  year: 2015,
  body: 'SEDAN 4D',
  type: 'AUTOMOBILE',
  fuel: 'GAS',
  engine: '2.5L 4',
  cylinders: 4,
  drive: 'FRONT-WHEEL DRIVE',
  transmission: 'AUTOMATIC',
  color: 'BLACK',
} satisfies Partial<Lot>;

export const SANDBOX_CATALOGUE: readonly SandboxVehicle[] = [
  {
    vin: '4T1BF1FK7FU900011',
    purpose: 'Several lots at both auctions, one of them upcoming (no sale date yet)',
    lots: lotsOf('4T1BF1FK7FU900011', camry, [
      { auction: 'copart', lot_id: 90000011, sale_date: '2019-04-16T17:00:00.000Z', odometer: 48210, odometer_type: 'ACTUAL', price: 6400, repair_cost: 5200, retail_value: 13900, primary_damage: 'FRONT END', secondary_damage: 'MINOR DENT/SCRATCHES', document: 'CLEAN TITLE', keys: 'YES', highlight: 'RUNS AND DRIVES', location: 'SACRAMENTO', location_zip: '95828' },
      { auction: 'iaai', lot_id: 39000012, sale_date: '2021-09-02T15:30:00.000Z', odometer: 76540, odometer_type: 'ACTUAL', price: 7100, repair_cost: 3100, retail_value: 12500, primary_damage: 'REAR END', secondary_damage: null, document: 'CLEAN TITLE', keys: 'YES', highlight: 'RUN & DRIVE', location: 'DALLAS', location_zip: '75041' },
      { auction: 'copart', lot_id: 90000013, sale_date: '2023-06-20T16:00:00.000Z', odometer: 98120, odometer_type: 'ACTUAL', price: 5300, repair_cost: 2800, retail_value: 10800, primary_damage: 'SIDE', secondary_damage: 'FRONT END', document: 'CLEAN TITLE', keys: 'YES', highlight: 'ENHANCED VEHICLES', location: 'PHOENIX', location_zip: '85043' },
      { auction: 'copart', lot_id: 90000014, sale_date: null, odometer: 101300, odometer_type: 'ACTUAL', price: null, repair_cost: 2400, retail_value: 9900, primary_damage: 'MINOR DENT/SCRATCHES', secondary_damage: null, document: 'CLEAN TITLE', keys: 'YES', highlight: 'RUNS AND DRIVES', location: 'LAS VEGAS', location_zip: '89115' },
    ]),
  },
  {
    vin: '1HGCV1F36LA900021',
    purpose: 'A valid VIN with no lot: answers 404',
    lots: [],
  },
  {
    vin: '1FTEW1EP8KFA90031',
    purpose: 'One lot, at Copart',
    lots: lotsOf(
      '1FTEW1EP8KFA90031',
      { name: '2019 FORD F-150 XLT', brand: 'FORD', model: 'F-150', configuration: 'XLT', year: 2019, body: 'CREW PICKUP', type: 'PICKUP TRUCK', fuel: 'GAS', engine: '2.7L 6', cylinders: 6, drive: 'FOUR-WHEEL DRIVE', transmission: 'AUTOMATIC', color: 'BLUE' },
      [{ auction: 'copart', lot_id: 90000031, sale_date: '2022-05-11T17:00:00.000Z', odometer: 61200, odometer_type: 'ACTUAL', price: 14800, repair_cost: 9400, retail_value: 31500, primary_damage: 'FRONT END', document: 'CLEAN TITLE', keys: 'YES', highlight: 'RUNS AND DRIVES', location: 'HOUSTON', location_zip: '77073' }],
    ),
  },
  {
    vin: '1G1ZD5STXJF900041',
    purpose: 'One lot, at IAAI',
    lots: lotsOf(
      '1G1ZD5STXJF900041',
      { name: '2018 CHEVROLET MALIBU LT', brand: 'CHEVROLET', model: 'MALIBU', configuration: 'LT', year: 2018, body: 'SEDAN 4D', type: 'AUTOMOBILE', fuel: 'GAS', engine: '1.5L 4', cylinders: 4, drive: 'FRONT-WHEEL DRIVE', transmission: 'AUTOMATIC', color: 'WHITE' },
      [{ auction: 'iaai', lot_id: 39000041, sale_date: '2023-02-14T15:00:00.000Z', odometer: 70450, odometer_type: 'ACTUAL', price: 4200, repair_cost: 6100, retail_value: 12900, primary_damage: 'LEFT SIDE', document: 'CLEAN TITLE', keys: 'YES', highlight: 'STARTS', location: 'ATLANTA', location_zip: '30336' }],
    ),
  },
  {
    vin: '1N4AL3AP4FC900051',
    purpose: 'Every red flag: odometer not actual, odometer going down between lots, flood damage, salvage title, sold twice within a year, keys missing',
    lots: lotsOf('1N4AL3AP4FC900051', altima, [
      { auction: 'copart', lot_id: 90000051, sale_date: '2022-03-15T17:00:00.000Z', odometer: 112400, odometer_type: 'ACTUAL', price: 3900, repair_cost: 4100, retail_value: 9800, primary_damage: 'FRONT END', document: 'CLEAN TITLE', keys: 'YES', highlight: 'RUNS AND DRIVES', location: 'MIAMI', location_zip: '33166' },
      { auction: 'iaai', lot_id: 39000052, sale_date: '2022-11-08T15:30:00.000Z', odometer: 64210, odometer_type: 'NOT ACTUAL', price: 1450, repair_cost: 8700, retail_value: 8900, primary_damage: 'WATER/FLOOD', secondary_damage: 'ALL OVER', document: 'SALVAGE CERTIFICATE', keys: 'NO', highlight: 'STATIONARY', location: 'HOUSTON', location_zip: '77044' },
    ]),
  },
];

const byVin = new Map(SANDBOX_CATALOGUE.map((vehicle) => [vehicle.vin, vehicle]));
const vinByLot = new Map(SANDBOX_CATALOGUE.flatMap((vehicle) => vehicle.lots.map((lot) => [`${lot.auction}/${lot.lot_id}`, vehicle.vin] as const)));

/** The auctions of the catalogue: the lot lookup's known auctions for a sandbox token. */
export const SANDBOX_AUCTIONS: readonly string[] = [...new Set(SANDBOX_CATALOGUE.flatMap((vehicle) => vehicle.lots.map((lot) => lot.auction)))].sort();

/** The catalogue's lots of a VIN, newest sale first (copies: a caller may not change the catalogue); none for any other VIN. */
export function sandboxLots(vin: string): Lot[] {
  return (byVin.get(vin)?.lots ?? []).map((lot) => ({ ...lot, images: [...lot.images] }));
}

/** The VIN of a catalogue lot, or null. */
export function sandboxVinOfLot(auction: string, lotId: number): string | null {
  return vinByLot.get(`${auction}/${lotId}`) ?? null;
}

/**
 * The limits a sandbox token answers with when its account has no plan in force (it may search
 * anyway): the Standard plan's rate and quota, over calendar months. With a plan, the plan's own.
 */
export const SANDBOX_ALLOWANCE = { ratePerSecond: 2, monthlyQuota: 1000 } as const;
