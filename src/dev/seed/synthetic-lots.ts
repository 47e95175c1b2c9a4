import type { Lot } from '../../domain/lot.ts';
import { computeCheckDigit } from '../../domain/vin.ts';
import { mix32, Prng, WeightedTable } from './prng.ts';
import {
  COLORS,
  COPART_HIGHLIGHTS,
  DAMAGES,
  IAAI_HIGHLIGHTS,
  ODOMETER_TYPES,
  SEVERE_DAMAGES,
  TITLES,
  VEHICLE_MODELS,
  YARDS,
  type VehicleModel,
  type Yard,
} from './synthetic-catalogue.ts';

/**
 * Synthetic auction lots for benchmarks, demos and `vinhistory seed`: realistic enough that a
 * report looks and weighs like a real one (VINs with valid check digits, one vehicle's make,
 * model and engine the same in all its lots, odometers that only go up, sale dates in order),
 * and reproducible: the same options always give the same lots, and a smaller count gives a
 * prefix of a larger one.
 */
export interface GenerateLotsOptions {
  /** How many lots to make. */
  count: number;
  /** Any 32-bit integer; the same seed gives the same lots. Default 1. */
  seed?: number;
  /**
   * Sale dates fall in the five years before this instant. Default: the start of the current UTC
   * day, so that runs on one day agree; pass a fixed date for output that never changes.
   */
  until?: Date;
  /** Called once per vehicle, before its lots are yielded (e.g. to sample VINs to search for). */
  onVehicle?: (vin: string, lotCount: number) => void;
}

/**
 * A run stays well inside the identifier spaces that keep its VINs and lot ids unique:
 * 11 million vehicles (see syntheticVin) and 90 million lot ids per auction.
 */
export const MAX_SYNTHETIC_LOTS = 10_000_000;

const DAY_MS = 86_400_000;
const YEAR_MS = 365.25 * DAY_MS;
const HISTORY_YEARS = 5;
const SERIALS = 1_000_000;
const LOT_ID_BASE = 10_000_000;
const LOT_ID_SPACE = 90_000_000;
// Multipliers coprime to their modulus turn a counter into a permutation that looks random.
const SERIAL_STEP = 738_919;
const LOT_ID_STEP = 7_919_071;
// Model-year codes (VIN position 10), a 30-year cycle starting with A for 1980.
const YEAR_CODES = 'ABCDEFGHJKLMNPRSTVWXY123456789';

const MODELS = new WeightedTable(VEHICLE_MODELS.map((model) => [model, model.weight] as const));
const LOTS_PER_VEHICLE = new WeightedTable<number>([
  [1, 56],
  [2, 28],
  [3, 11],
  [4, 5],
]);
const DAMAGE_TABLE = new WeightedTable(DAMAGES);
const TITLE_TABLE = new WeightedTable(TITLES);
const COLOR_TABLE = new WeightedTable(COLORS);
const COPART_HIGHLIGHT_TABLE = new WeightedTable(COPART_HIGHLIGHTS);
const IAAI_HIGHLIGHT_TABLE = new WeightedTable(IAAI_HIGHLIGHTS);
const ODOMETER_TYPE_TABLE = new WeightedTable(ODOMETER_TYPES);

/** IAAI writes branch locations in title case with the state in brackets; Copart as "ST - CITY". */
const IAAI_LOCATIONS = new Map<Yard, string>(
  YARDS.map((yard) => [
    yard,
    `${yard.city.toLowerCase().replace(/\b[a-z]/g, (c) => c.toUpperCase())} (${yard.state})`,
  ]),
);

/** Facts of one vehicle, the same in every lot of it. */
interface Vehicle {
  vin: string;
  model: VehicleModel;
  year: number;
  trim: string;
  color: string;
  engine: string;
  cylinders: number | null;
  fuel: string;
  drive: string;
  transmission: string;
  /** When it was new, for depreciation and mileage. */
  bornAt: number;
  annualMiles: number;
}

export function* generateLots(options: GenerateLotsOptions): Generator<Lot, void, undefined> {
  const { count } = options;
  if (!Number.isSafeInteger(count) || count < 0 || count > MAX_SYNTHETIC_LOTS) {
    throw new RangeError(`count must be an integer from 0 to ${MAX_SYNTHETIC_LOTS}; got ${count}`);
  }
  const seed = options.seed ?? 1;
  const until = (options.until ?? startOfUtcDay(new Date())).getTime();
  if (!Number.isFinite(until)) throw new RangeError('until must be a valid date');

  const rng = new Prng(seed);
  // Offsets derived from the seed, so that runs with different seeds use different VINs and lot
  // ids and can be loaded into one database side by side.
  const serialOffset = mix32(seed ^ 0x5eed0001) % SERIALS;
  const lotIdOffsets = { copart: mix32(seed ^ 0x5eed0002) % LOT_ID_SPACE, iaai: mix32(seed ^ 0x5eed0003) % LOT_ID_SPACE };
  const lotCounters = { copart: 0, iaai: 0 };
  const nextLotId = (auction: 'copart' | 'iaai') =>
    LOT_ID_BASE + ((lotCounters[auction]++ * LOT_ID_STEP + lotIdOffsets[auction]) % LOT_ID_SPACE);

  const untilYear = new Date(until).getUTCFullYear();
  const historyStart = until - HISTORY_YEARS * YEAR_MS;

  let produced = 0;
  for (let vehicleIndex = 0; produced < count; vehicleIndex++) {
    const vehicle = makeVehicle(rng, vehicleIndex, serialOffset, untilYear);
    const lotCount = Math.min(LOTS_PER_VEHICLE.pick(rng), count - produced);
    options.onVehicle?.(vehicle.vin, lotCount);

    // A car reaches auction at the earliest some months before its model year begins.
    const firstPossible = Math.max(historyStart, Date.UTC(vehicle.year - 1, 8, 1));
    const saleTimes = drawSaleTimes(rng, lotCount, firstPossible, until);
    // The newest lot of a vehicle is sometimes still to be sold: no date, no price yet.
    const upcomingLast = rng.chance(0.04);

    let previous: LotFacts | null = null;
    let yard = rng.pick(YARDS);
    for (let i = 0; i < lotCount; i++) {
      const time = saleTimes[i]!;
      // A relist within a few months is the same wreck offered again: same damage, same
      // odometer, often the same yard. A sale years later follows a new accident.
      const relist = previous !== null && time - previous.time < 180 * DAY_MS;
      if (previous !== null && !(relist && rng.chance(0.6))) yard = rng.pick(YARDS);
      const auction = rng.chance(0.6) ? 'copart' : 'iaai';
      const facts = lotFacts(rng, vehicle, time, yard, relist ? previous : null, previous?.odometer ?? 0);
      produced++;
      yield makeLot(rng, vehicle, facts, {
        auction,
        lotId: nextLotId(auction),
        upcoming: upcomingLast && i === lotCount - 1,
      });
      previous = facts;
    }
  }
}

/**
 * A uniform sample of VINs from a run of any size (reservoir sampling), for benchmarks and for
 * the seed command to suggest VINs to try. Deterministic for its seed.
 */
export class VinReservoir {
  private readonly sample: string[] = [];
  private readonly rng: Prng;
  private seen = 0;

  constructor(
    private readonly size: number,
    seed = 1,
  ) {
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError(`size must be a positive integer; got ${size}`);
    this.rng = new Prng(mix32(seed ^ 0x7e5e7001));
  }

  offer(vin: string): void {
    this.seen++;
    if (this.sample.length < this.size) {
      this.sample.push(vin);
      return;
    }
    const slot = Math.floor(this.rng.next() * this.seen);
    if (slot < this.size) this.sample[slot] = vin;
  }

  get vins(): readonly string[] {
    return this.sample;
  }

  /** How many VINs were offered in all. */
  get offered(): number {
    return this.seen;
  }
}

function startOfUtcDay(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
}

function makeVehicle(rng: Prng, index: number, serialOffset: number, untilYear: number): Vehicle {
  const model = MODELS.pick(rng);
  const [from, to] = model.years;
  // Salvage auctions see cars of every age, most of them 3 to 12 years old: a triangular
  // distribution over 0-16 years with its peak at 8.
  let year = untilYear - Math.floor((rng.next() + rng.next()) * 8);
  if (year < from || year > to) year = rng.int(from, Math.min(to, untilYear));
  const powertrain = rng.pick(model.powertrains);
  return {
    vin: syntheticVin(rng, model, year, index, serialOffset),
    model,
    year,
    trim: rng.pick(model.trims),
    color: COLOR_TABLE.pick(rng),
    engine: powertrain.engine,
    cylinders: powertrain.cylinders,
    fuel: powertrain.fuel,
    drive: rng.pick(model.drives),
    transmission: rng.pick(model.transmissions),
    bornAt: Date.UTC(year - 1, 8, 1),
    annualMiles: rng.int(6_000, 17_000),
  };
}

/**
 * WMI + VDS of the model, the check digit, the model-year code, a plant and a six-digit serial.
 * Uniqueness within a run comes from the tail: the serial is a permutation of the vehicle index
 * over a million values, and each further million takes a plant code of its own ('0'-'9', which
 * the catalogue never uses), so two vehicles of a run never share a VIN.
 */
export function syntheticVin(
  rng: Prng,
  model: Pick<VehicleModel, 'wmis' | 'vds' | 'plants'>,
  year: number,
  index: number,
  serialOffset: number,
): string {
  const block = Math.floor(index / SERIALS);
  if (block > 10) throw new RangeError('a synthetic run is limited to 11 million vehicles');
  const plant = block === 0 ? model.plants[Math.floor(rng.next() * model.plants.length)]! : String(block - 1);
  const serial = String(((index % SERIALS) * SERIAL_STEP + serialOffset) % SERIALS).padStart(6, '0');
  const draft = `${rng.pick(model.wmis)}${rng.pick(model.vds)}0${YEAR_CODES[(year - 1980) % 30]}${plant}${serial}`;
  return `${draft.slice(0, 8)}${computeCheckDigit(draft)}${draft.slice(9)}`;
}

/** `count` sale times in order, on the hours auctions run (14:00-21:30 UTC), in [from, until). */
function drawSaleTimes(rng: Prng, count: number, from: number, until: number): number[] {
  const firstDay = Math.floor(from / DAY_MS);
  const days = Math.max(1, Math.floor(until / DAY_MS) - firstDay);
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const day = firstDay + Math.floor(rng.next() * days);
    const time = day * DAY_MS + rng.int(14, 21) * 3_600_000 + (rng.chance(0.5) ? 1_800_000 : 0);
    times.push(Math.min(time, until - 1));
  }
  return times.sort((a, b) => a - b);
}

/** What one sale says about the car, before a feed leaves any of it out. */
interface LotFacts {
  time: number;
  yard: Yard;
  primaryDamage: string;
  secondaryDamage: string | null;
  title: string;
  odometer: number;
  retail: number;
  repairCost: number;
  price: number;
  ageYears: number;
}

/** Damages a buyer repairs cheaply: such cars sell for about half their retail value. */
const LIGHT_DAMAGES: ReadonlySet<string> = new Set(['MINOR DENT/SCRATCHES', 'HAIL', 'NORMAL WEAR', 'VANDALISM']);

/**
 * How a title moves the price against a salvage certificate: a clean title sells higher, a car
 * that may never be registered again (non-repairable, junk, parts only) goes for its parts.
 */
const TITLE_FACTORS: ReadonlyMap<string, number> = new Map([
  ['CERTIFICATE OF TITLE', 1.3],
  ['REBUILT TITLE', 1.1],
  ['NON-REPAIRABLE', 0.5],
  ['JUNK', 0.4],
  ['PARTS ONLY', 0.4],
]);

function lotFacts(rng: Prng, vehicle: Vehicle, time: number, yard: Yard, relistOf: LotFacts | null, lastOdometer: number): LotFacts {
  const primaryDamage = relistOf ? relistOf.primaryDamage : DAMAGE_TABLE.pick(rng);
  let secondaryDamage = relistOf ? relistOf.secondaryDamage : rng.chance(0.45) ? null : DAMAGE_TABLE.pick(rng);
  if (secondaryDamage === primaryDamage) secondaryDamage = null;
  const severe = SEVERE_DAMAGES.has(primaryDamage);
  const titleKind = relistOf && rng.chance(0.8) ? titleKindOf(relistOf.title) : TITLE_TABLE.pick(rng);
  const title = `${yard.state} - ${titleKind}`;
  const ageYears = Math.max(0.05, (time - vehicle.bornAt) / YEAR_MS);
  const odometer = relistOf
    ? relistOf.odometer
    : Math.min(999_999, Math.max(Math.round(ageYears * vehicle.annualMiles * (0.85 + rng.next() * 0.3)), lastOdometer + rng.int(10, 400)));
  const retail = Math.round(vehicle.model.msrp * 0.86 ** ageYears * (0.85 + rng.next() * 0.25));
  const repairCost = Math.round(retail * (severe ? 0.8 + rng.next() * 0.5 : 0.12 + rng.next() * 0.8));
  const price = Math.max(100, Math.round((retail * priceShare(rng, vehicle, primaryDamage, secondaryDamage, titleKind)) / 25) * 25);
  return { time, yard, primaryDamage, secondaryDamage, title, odometer, retail, repairCost, price, ageYears };
}

function titleKindOf(title: string): string {
  return title.slice(title.indexOf(' - ') + 3);
}

/**
 * The share of retail value a salvage car sells for. Sale prices of one make, model, year and
 * damage spread widely and unevenly (the comparables' median, quartiles and tails are what the
 * market value reports): a log-normal around a median set by the damage's severity, moved by the
 * title, a second damage and the mileage against the usual 12,000 a year, with a few cars that do
 * not run and sell for half as much. A uniform draw, as before, gave every comparable set the
 * same flat, symmetric spread.
 */
function priceShare(rng: Prng, vehicle: Vehicle, primaryDamage: string, secondaryDamage: string | null, titleKind: string): number {
  const median = SEVERE_DAMAGES.has(primaryDamage) ? 0.11 : LIGHT_DAMAGES.has(primaryDamage) ? 0.48 : 0.3;
  let share = median * (TITLE_FACTORS.get(titleKind) ?? 1) * (secondaryDamage === null ? 1 : 0.88) * (12_000 / vehicle.annualMiles) ** 0.3;
  share *= Math.exp(0.35 * gaussian(rng));
  if (rng.chance(0.04)) share *= 0.5;
  return Math.min(0.92, Math.max(0.02, share));
}

/** A standard normal draw (Box-Muller). */
function gaussian(rng: Prng): number {
  return Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
}

/** Feeds leave fields out now and then; an importer keeps them as null. */
function orNull<T>(rng: Prng, value: T, p = 0.015): T | null {
  return rng.next() < p ? null : value;
}

function makeLot(
  rng: Prng,
  vehicle: Vehicle,
  facts: LotFacts,
  listing: { auction: 'copart' | 'iaai'; lotId: number; upcoming: boolean },
): Lot {
  const { auction, lotId, upcoming } = listing;
  const { model } = vehicle;
  const { yard } = facts;
  const spelling = vehicleSpelling(auction, model);
  return {
    vin: vehicle.vin,
    body: orNull(rng, model.body),
    fuel: orNull(rng, vehicle.fuel),
    keys: orNull(rng, rng.chance(0.87) ? 'YES' : 'NO'),
    name: `${spelling.brand} ${spelling.model} ${vehicle.trim}`,
    type: orNull(rng, model.type),
    year: vehicle.year,
    brand: spelling.brand,
    color: orNull(rng, vehicle.color),
    drive: orNull(rng, vehicle.drive),
    model: spelling.model,
    price: upcoming || rng.chance(0.06) ? null : facts.price,
    engine: orNull(rng, vehicle.engine),
    lot_id: lotId,
    auction,
    document: orNull(rng, facts.title),
    location: auction === 'copart' ? `${yard.state} - ${yard.city}` : IAAI_LOCATIONS.get(yard)!,
    odometer: orNull(rng, facts.odometer, 0.02),
    cylinders: vehicle.cylinders === null ? null : orNull(rng, vehicle.cylinders),
    highlight: orNull(rng, (auction === 'copart' ? COPART_HIGHLIGHT_TABLE : IAAI_HIGHLIGHT_TABLE).pick(rng), 0.03),
    sale_date: upcoming ? null : new Date(facts.time).toISOString(),
    repair_cost: orNull(rng, facts.repairCost, 0.15),
    location_zip: orNull(rng, yard.zip, 0.01),
    retail_value: orNull(rng, facts.retail, 0.04),
    transmission: orNull(rng, vehicle.transmission),
    configuration: orNull(rng, vehicle.trim, 0.05),
    odometer_type: orNull(rng, facts.ageYears > 10 && rng.chance(0.4) ? 'EXEMPT' : ODOMETER_TYPE_TABLE.pick(rng), 0.02),
    primary_damage: damageSpelling(auction, facts.primaryDamage),
    secondary_damage: facts.secondaryDamage === null ? null : damageSpelling(auction, facts.secondaryDamage),
    images: imagesFor(rng, auction, lotId, yard, facts.time),
  };
}

/**
 * The two feeds spell one vehicle and one damage differently, as the real ones do: Copart in upper
 * case with the maker's punctuation ("FORD F-150", "FRONT END"), IAAI's in title and sentence case
 * without the hyphen before a digit ("Ford F150", "Front end"). The catalogue and the market compare on keys
 * (domain/market-key.ts) that make these one; synthetic data that spelled them alike would never
 * exercise that.
 */
function vehicleSpelling(auction: 'copart' | 'iaai', model: VehicleModel): { brand: string; model: string } {
  if (auction === 'copart') return { brand: model.brand, model: model.model };
  const key = `${model.brand}\u0000${model.model}`;
  let spelling = IAAI_SPELLINGS.get(key);
  if (spelling === undefined) {
    spelling = { brand: titleCase(model.brand), model: titleCase(model.model.replace(/-(?=\d)/g, '')) };
    IAAI_SPELLINGS.set(key, spelling);
  }
  return spelling;
}

const IAAI_SPELLINGS = new Map<string, { brand: string; model: string }>();

/** "MERCEDES-BENZ" to "Mercedes-Benz", "RAV4" to "Rav4"; a short word without a vowel ("BMW", "CX5", "CR-V") stays in capitals. */
function titleCase(value: string): string {
  return value.toLowerCase().replace(/[a-z]+/g, (word) => (word.length <= 3 && !/[aeiou]/.test(word) ? word.toUpperCase() : word.charAt(0).toUpperCase() + word.slice(1)));
}

function damageSpelling(auction: 'copart' | 'iaai', damage: string): string {
  return auction === 'copart' ? damage : damage.charAt(0) + damage.slice(1).toLowerCase();
}

/** 3 to 10 photos on the auction's own image host, in the URL shapes each auction serves. */
function imagesFor(rng: Prng, auction: 'copart' | 'iaai', lotId: number, yard: Yard, time: number): string[] {
  const count = rng.int(3, 10);
  const images: string[] = new Array<string>(count);
  if (auction === 'iaai') {
    for (let i = 0; i < count; i++) {
      images[i] = `https://vis.iaai.com/resizer?imageKeys=${lotId}~SID~B${yard.branch}~I${i + 1}~S0~RW2576~H1932~TH0&width=845&height=633`;
    }
    return images;
  }
  const date = new Date(time);
  const folder = `${String(date.getUTCMonth() + 1).padStart(2, '0')}${String(date.getUTCFullYear() % 100).padStart(2, '0')}`;
  for (let i = 0; i < count; i++) {
    images[i] = `https://cs.copart.com/v1/AUTH_svc.pdoc00001/lpp/${folder}/${hex8(rng)}${hex8(rng)}${hex8(rng)}${hex8(rng)}_ful.jpg`;
  }
  return images;
}

function hex8(rng: Prng): string {
  return rng.uint32().toString(16).padStart(8, '0');
}
