/**
 * The vocabulary of synthetic lots: vehicles as they reach US salvage auctions (Copart, IAAI),
 * with the spellings those auctions use in their feeds (upper-case makes, "4x4 w/Rear Wheel Drv",
 * "CA - SACRAMENTO", "SALVAGE CERTIFICATE"), so that synthetic reports read like real ones and
 * their sizes match what a real report weighs.
 */

export interface Powertrain {
  engine: string;
  cylinders: number | null;
  fuel: string;
}

export interface VehicleModel {
  brand: string;
  model: string;
  /** World manufacturer identifiers (VIN positions 1-3) this model is built under. */
  wmis: readonly string[];
  /** Vehicle descriptor sections (VIN positions 4-8): body, restraints, engine codes. */
  vds: readonly string[];
  /** Assembly-plant codes (VIN position 11). Letters only: digits are kept for the generator. */
  plants: string;
  trims: readonly string[];
  body: string;
  type: 'AUTOMOBILE' | 'SUV' | 'PICKUP TRUCK' | 'VAN';
  powertrains: readonly Powertrain[];
  drives: readonly string[];
  transmissions: readonly string[];
  years: readonly [from: number, to: number];
  /** Typical price new, in US dollars: the base of retail value, repair cost and sale price. */
  msrp: number;
  /** How often the model turns up at auction, relative to the others. */
  weight: number;
}

const gas = (engine: string, cylinders: number): Powertrain => ({ engine, cylinders, fuel: 'GAS' });
const hybrid = (engine: string, cylinders: number): Powertrain => ({ engine, cylinders, fuel: 'HYBRID ENGINE' });
const ELECTRIC: Powertrain = { engine: 'ELECTRIC', cylinders: null, fuel: 'ELECTRIC' };

const FWD = 'Front-wheel Drive';
const RWD = 'Rear-wheel drive';
const AWD = 'All wheel drive';
const FOUR_BY_FOUR = '4x4 w/Rear Wheel Drv';
const AUTO = ['AUTOMATIC'] as const;
const MOSTLY_AUTO = ['AUTOMATIC', 'AUTOMATIC', 'AUTOMATIC', 'MANUAL'] as const;

export const VEHICLE_MODELS: readonly VehicleModel[] = [
  { brand: 'FORD', model: 'F-150', wmis: ['1FT'], vds: ['EW1EP', 'FW1E5', 'EW1CG', 'EX1EP'], plants: 'FK', trims: ['XL', 'XLT', 'LARIAT', 'KING RANCH', 'PLATINUM'], body: 'CREW PICKUP', type: 'PICKUP TRUCK', powertrains: [gas('3.5L 6', 6), gas('2.7L 6', 6), gas('5.0L 8', 8)], drives: [FOUR_BY_FOUR, RWD], transmissions: AUTO, years: [2009, 2025], msrp: 48_000, weight: 9 },
  { brand: 'FORD', model: 'ESCAPE', wmis: ['1FM'], vds: ['CU0GD', 'CU9GX', 'CU0HD'], plants: 'U', trims: ['S', 'SE', 'SEL', 'TITANIUM'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('1.5L 3', 3), gas('1.5L 4', 4), gas('2.0L 4', 4)], drives: [FWD, AWD], transmissions: AUTO, years: [2010, 2025], msrp: 30_000, weight: 6 },
  { brand: 'FORD', model: 'FUSION', wmis: ['3FA'], vds: ['6P0H7', '6P0HD', '6P0LU'], plants: 'R', trims: ['S', 'SE', 'TITANIUM'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('2.5L 4', 4), gas('1.5L 4', 4), hybrid('2.0L 4', 4)], drives: [FWD], transmissions: AUTO, years: [2010, 2020], msrp: 26_000, weight: 5 },
  { brand: 'FORD', model: 'MUSTANG', wmis: ['1FA'], vds: ['6P8TH', '6P8CF', '6P8AM'], plants: 'F', trims: ['ECOBOOST', 'GT', 'GT PREMIUM'], body: 'COUPE 2D', type: 'AUTOMOBILE', powertrains: [gas('2.3L 4', 4), gas('5.0L 8', 8)], drives: [RWD], transmissions: MOSTLY_AUTO, years: [2010, 2025], msrp: 38_000, weight: 3 },
  { brand: 'CHEVROLET', model: 'SILVERADO', wmis: ['1GC', '3GC'], vds: ['UYDED', 'UKREC', 'RYEED'], plants: 'GZ', trims: ['WT', 'LT', 'RST', 'LTZ', 'HIGH COUNTRY'], body: 'CREW PICKUP', type: 'PICKUP TRUCK', powertrains: [gas('5.3L 8', 8), gas('6.2L 8', 8), gas('2.7L 4', 4)], drives: [FOUR_BY_FOUR, RWD], transmissions: AUTO, years: [2009, 2025], msrp: 45_000, weight: 7 },
  { brand: 'CHEVROLET', model: 'MALIBU', wmis: ['1G1'], vds: ['ZD5ST', 'ZB5ST', 'ZE5ST'], plants: 'F', trims: ['LS', 'LT', 'PREMIER'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('1.5L 4', 4), gas('2.0L 4', 4), gas('2.5L 4', 4)], drives: [FWD], transmissions: AUTO, years: [2010, 2024], msrp: 25_000, weight: 5 },
  { brand: 'CHEVROLET', model: 'EQUINOX', wmis: ['2GN', '3GN'], vds: ['AXKEV', 'AXUEV', 'AXSEV'], plants: 'LS', trims: ['LS', 'LT', 'PREMIER'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('1.5L 4', 4), gas('2.4L 4', 4)], drives: [FWD, AWD], transmissions: AUTO, years: [2010, 2025], msrp: 28_000, weight: 6 },
  { brand: 'CHEVROLET', model: 'TAHOE', wmis: ['1GN'], vds: ['SKBKC', 'SCBKC', 'SKCKC'], plants: 'R', trims: ['LS', 'LT', 'Z71', 'PREMIER'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('5.3L 8', 8), gas('6.2L 8', 8)], drives: [FOUR_BY_FOUR, RWD], transmissions: AUTO, years: [2010, 2025], msrp: 55_000, weight: 2 },
  { brand: 'GMC', model: 'SIERRA', wmis: ['1GT', '3GT'], vds: ['U9DED', 'P9EEL', 'U9EE8'], plants: 'GZ', trims: ['SLE', 'SLT', 'AT4', 'DENALI'], body: 'CREW PICKUP', type: 'PICKUP TRUCK', powertrains: [gas('5.3L 8', 8), gas('6.2L 8', 8)], drives: [FOUR_BY_FOUR], transmissions: AUTO, years: [2010, 2025], msrp: 50_000, weight: 3 },
  { brand: 'HONDA', model: 'ACCORD', wmis: ['1HG'], vds: ['CV1F3', 'CR2F3', 'CV2F5'], plants: 'A', trims: ['LX', 'SPORT', 'EX', 'EX-L', 'TOURING'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('1.5L 4', 4), gas('2.4L 4', 4), gas('2.0L 4', 4), gas('3.5L 6', 6)], drives: [FWD], transmissions: MOSTLY_AUTO, years: [2008, 2025], msrp: 28_000, weight: 7 },
  { brand: 'HONDA', model: 'CIVIC', wmis: ['2HG', '19X'], vds: ['FC2F5', 'FC1F7', 'FE2F5'], plants: 'H', trims: ['LX', 'SPORT', 'EX', 'SI'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('2.0L 4', 4), gas('1.5L 4', 4), gas('1.8L 4', 4)], drives: [FWD], transmissions: MOSTLY_AUTO, years: [2008, 2025], msrp: 23_000, weight: 7 },
  { brand: 'HONDA', model: 'CR-V', wmis: ['5J6', '2HK'], vds: ['RW2H5', 'RW1H8', 'RM4H5'], plants: 'L', trims: ['LX', 'EX', 'EX-L', 'TOURING'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('1.5L 4', 4), gas('2.4L 4', 4)], drives: [FWD, AWD], transmissions: AUTO, years: [2008, 2025], msrp: 30_000, weight: 6 },
  { brand: 'HONDA', model: 'ODYSSEY', wmis: ['5FN'], vds: ['RL6H5', 'RL5H6', 'RL6H7'], plants: 'B', trims: ['EX', 'EX-L', 'TOURING'], body: 'SPORTS VAN', type: 'VAN', powertrains: [gas('3.5L 6', 6)], drives: [FWD], transmissions: AUTO, years: [2011, 2025], msrp: 38_000, weight: 2 },
  { brand: 'TOYOTA', model: 'CAMRY', wmis: ['4T1'], vds: ['B11HK', 'G11AK', 'BF1FK'], plants: 'U', trims: ['LE', 'SE', 'XLE', 'XSE'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('2.5L 4', 4), gas('3.5L 6', 6), hybrid('2.5L 4', 4)], drives: [FWD], transmissions: AUTO, years: [2008, 2025], msrp: 27_000, weight: 8 },
  { brand: 'TOYOTA', model: 'COROLLA', wmis: ['2T1', '5YF'], vds: ['BURHE', 'BU4EE', 'EPRHE'], plants: 'CP', trims: ['L', 'LE', 'S', 'SE', 'XSE'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('1.8L 4', 4), gas('2.0L 4', 4)], drives: [FWD], transmissions: AUTO, years: [2009, 2025], msrp: 21_000, weight: 7 },
  { brand: 'TOYOTA', model: 'RAV4', wmis: ['2T3', 'JTM'], vds: ['W1RFV', 'P1RFV', 'RWRFV'], plants: 'W', trims: ['LE', 'XLE', 'ADVENTURE', 'LIMITED'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('2.5L 4', 4), hybrid('2.5L 4', 4)], drives: [FWD, AWD], transmissions: AUTO, years: [2010, 2025], msrp: 30_000, weight: 6 },
  { brand: 'TOYOTA', model: 'TACOMA', wmis: ['3TM', '5TF'], vds: ['CZ5AN', 'AZ5CN', 'CZ5CN'], plants: 'MX', trims: ['SR', 'SR5', 'TRD SPORT', 'TRD OFF ROAD', 'LIMITED'], body: 'CREW PICKUP', type: 'PICKUP TRUCK', powertrains: [gas('3.5L 6', 6), gas('2.7L 4', 4)], drives: [FOUR_BY_FOUR, RWD], transmissions: MOSTLY_AUTO, years: [2010, 2025], msrp: 36_000, weight: 4 },
  { brand: 'TOYOTA', model: 'PRIUS', wmis: ['JTD'], vds: ['KARFU', 'KN3DU', 'KBRFU'], plants: 'J', trims: ['TWO', 'THREE', 'FOUR'], body: 'HATCHBACK 4D', type: 'AUTOMOBILE', powertrains: [hybrid('1.8L 4', 4)], drives: [FWD], transmissions: AUTO, years: [2010, 2024], msrp: 27_000, weight: 2 },
  { brand: 'LEXUS', model: 'RX 350', wmis: ['2T2', 'JTJ'], vds: ['ZMCA4', 'BZMCA', 'ZFBA4'], plants: 'C', trims: ['BASE', 'F SPORT', 'PREMIUM'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('3.5L 6', 6)], drives: [FWD, AWD], transmissions: AUTO, years: [2010, 2025], msrp: 50_000, weight: 2 },
  { brand: 'NISSAN', model: 'ALTIMA', wmis: ['1N4'], vds: ['AL3AP', 'BL4BV', 'BL4EV'], plants: 'CN', trims: ['S', 'SV', 'SR', 'SL'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('2.5L 4', 4), gas('3.5L 6', 6)], drives: [FWD], transmissions: AUTO, years: [2008, 2025], msrp: 26_000, weight: 8 },
  { brand: 'NISSAN', model: 'ROGUE', wmis: ['5N1', 'JN8', 'KNM'], vds: ['AT2MV', 'AT3BA', 'BT3BA'], plants: 'WC', trims: ['S', 'SV', 'SL'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('2.5L 4', 4), gas('1.5L 3', 3)], drives: [FWD, AWD], transmissions: AUTO, years: [2010, 2025], msrp: 29_000, weight: 6 },
  { brand: 'NISSAN', model: 'SENTRA', wmis: ['3N1'], vds: ['AB7AP', 'AB8CV', 'AB7AT'], plants: 'Y', trims: ['S', 'SV', 'SR'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('1.8L 4', 4), gas('2.0L 4', 4)], drives: [FWD], transmissions: AUTO, years: [2010, 2025], msrp: 20_000, weight: 5 },
  { brand: 'JEEP', model: 'GRAND CHEROKEE', wmis: ['1C4'], vds: ['RJFAG', 'RJEAG', 'RJFBG'], plants: 'C', trims: ['LAREDO', 'LIMITED', 'OVERLAND', 'SUMMIT'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('3.6L 6', 6), gas('5.7L 8', 8)], drives: [FOUR_BY_FOUR, RWD], transmissions: AUTO, years: [2011, 2025], msrp: 45_000, weight: 5 },
  { brand: 'JEEP', model: 'WRANGLER', wmis: ['1C4'], vds: ['HJXDG', 'BJWDG', 'HJXEG'], plants: 'W', trims: ['SPORT', 'SAHARA', 'RUBICON'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('3.6L 6', 6), gas('2.0L 4', 4)], drives: [FOUR_BY_FOUR], transmissions: MOSTLY_AUTO, years: [2010, 2025], msrp: 38_000, weight: 4 },
  { brand: 'RAM', model: '1500', wmis: ['1C6', '3C6'], vds: ['RR7LT', 'SRFFT', 'RR7GT'], plants: 'SN', trims: ['TRADESMAN', 'BIG HORN', 'LARAMIE', 'LIMITED'], body: 'CREW PICKUP', type: 'PICKUP TRUCK', powertrains: [gas('5.7L 8', 8), gas('3.6L 6', 6)], drives: [FOUR_BY_FOUR, RWD], transmissions: AUTO, years: [2011, 2025], msrp: 47_000, weight: 5 },
  { brand: 'DODGE', model: 'CHARGER', wmis: ['2C3'], vds: ['CDXBG', 'CDXCT', 'CDXHG'], plants: 'H', trims: ['SXT', 'GT', 'R/T', 'SCAT PACK'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('3.6L 6', 6), gas('5.7L 8', 8), gas('6.4L 8', 8)], drives: [RWD, AWD], transmissions: AUTO, years: [2010, 2023], msrp: 33_000, weight: 4 },
  { brand: 'VOLKSWAGEN', model: 'JETTA', wmis: ['3VW'], vds: ['C57BU', 'D17AJ', 'E57BU'], plants: 'M', trims: ['S', 'SE', 'SEL', 'GLI'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('1.4L 4', 4), gas('1.8L 4', 4), gas('2.0L 4', 4)], drives: [FWD], transmissions: MOSTLY_AUTO, years: [2010, 2025], msrp: 22_000, weight: 5 },
  { brand: 'VOLKSWAGEN', model: 'TIGUAN', wmis: ['3VV', 'WVG'], vds: ['B7AX7', '2B7AX', 'C7AX7'], plants: 'M', trims: ['S', 'SE', 'SEL'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('2.0L 4', 4)], drives: [FWD, AWD], transmissions: AUTO, years: [2010, 2025], msrp: 30_000, weight: 3 },
  { brand: 'VOLKSWAGEN', model: 'PASSAT', wmis: ['1VW'], vds: ['A7A3K', 'B7A3K', 'T7A3K'], plants: 'C', trims: ['S', 'SE', 'SEL'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('1.8L 4', 4), gas('2.0L 4', 4), gas('3.6L 6', 6)], drives: [FWD], transmissions: AUTO, years: [2012, 2022], msrp: 26_000, weight: 3 },
  { brand: 'TESLA', model: 'MODEL 3', wmis: ['5YJ'], vds: ['3E1EA', '3E1EB', '3E1EC'], plants: 'F', trims: ['STANDARD RANGE', 'LONG RANGE', 'PERFORMANCE'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [ELECTRIC], drives: [RWD, AWD], transmissions: AUTO, years: [2017, 2025], msrp: 45_000, weight: 5 },
  { brand: 'TESLA', model: 'MODEL Y', wmis: ['5YJ'], vds: ['YGDEE', 'YGDED', 'YGAEE'], plants: 'F', trims: ['LONG RANGE', 'PERFORMANCE'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [ELECTRIC], drives: [AWD], transmissions: AUTO, years: [2020, 2025], msrp: 52_000, weight: 4 },
  { brand: 'TESLA', model: 'MODEL S', wmis: ['5YJ'], vds: ['SA1E2', 'SA1E4', 'SA1H2'], plants: 'F', trims: ['75D', '100D', 'PLAID'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [ELECTRIC], drives: [AWD, RWD], transmissions: AUTO, years: [2012, 2025], msrp: 85_000, weight: 1 },
  { brand: 'MERCEDES-BENZ', model: 'GL-CLASS', wmis: ['4JG'], vds: ['BF7BE', 'DF8DE', 'BF7CE'], plants: 'A', trims: ['GL 450 4MATIC', 'GL 550 4MATIC', 'GL 350 BLUETEC'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('4.6L 8', 8), gas('5.5L 8', 8), gas('3.0L 6', 6)], drives: [AWD], transmissions: AUTO, years: [2008, 2016], msrp: 65_000, weight: 1 },
  { brand: 'MERCEDES-BENZ', model: 'GLE-CLASS', wmis: ['4JG'], vds: ['DA5HB', 'FB4KB', 'ED5HB'], plants: 'A', trims: ['GLE 350', 'GLE 350 4MATIC', 'GLE 450 4MATIC'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('3.5L 6', 6), gas('3.0L 6', 6), gas('2.0L 4', 4)], drives: [AWD, RWD], transmissions: AUTO, years: [2016, 2025], msrp: 62_000, weight: 2 },
  { brand: 'MERCEDES-BENZ', model: 'C-CLASS', wmis: ['WDD', 'W1K', '55S'], vds: ['GF4HB', 'WF8DB', 'WF4KB'], plants: 'RU', trims: ['C 250', 'C 300', 'C 300 4MATIC', 'C 43 AMG'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('2.0L 4', 4), gas('1.8L 4', 4), gas('3.0L 6', 6)], drives: [RWD, AWD], transmissions: AUTO, years: [2008, 2025], msrp: 45_000, weight: 3 },
  { brand: 'BMW', model: '3 SERIES', wmis: ['WBA'], vds: ['8E9G5', '5R1C5', '3B5G5'], plants: 'NKA', trims: ['328I', '330I', '330I XDRIVE', '340I'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('2.0L 4', 4), gas('3.0L 6', 6)], drives: [RWD, AWD], transmissions: MOSTLY_AUTO, years: [2008, 2025], msrp: 45_000, weight: 3 },
  { brand: 'BMW', model: 'X5', wmis: ['5UX'], vds: ['KR0C5', 'CR6C5', 'TS4C5'], plants: 'L', trims: ['XDRIVE35I', 'XDRIVE40I', 'XDRIVE50I'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('3.0L 6', 6), gas('4.4L 8', 8)], drives: [AWD], transmissions: AUTO, years: [2008, 2025], msrp: 65_000, weight: 2 },
  { brand: 'AUDI', model: 'A4', wmis: ['WAU'], vds: ['ENAF4', 'FNAF4', 'DNAF4'], plants: 'NA', trims: ['PREMIUM', 'PREMIUM PLUS', 'PRESTIGE'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('2.0L 4', 4)], drives: [AWD, FWD], transmissions: AUTO, years: [2009, 2025], msrp: 42_000, weight: 2 },
  { brand: 'HYUNDAI', model: 'ELANTRA', wmis: ['5NP', 'KMH'], vds: ['D84LF', 'DH4AE', 'LM4AG'], plants: 'U', trims: ['SE', 'SEL', 'LIMITED'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('2.0L 4', 4), gas('1.8L 4', 4)], drives: [FWD], transmissions: AUTO, years: [2010, 2025], msrp: 20_000, weight: 5 },
  { brand: 'HYUNDAI', model: 'SONATA', wmis: ['5NP', 'KMH'], vds: ['E24AF', 'E34AF', 'EH4AF'], plants: 'H', trims: ['SE', 'SEL', 'LIMITED'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('2.4L 4', 4), gas('2.5L 4', 4), gas('1.6L 4', 4)], drives: [FWD], transmissions: AUTO, years: [2010, 2025], msrp: 25_000, weight: 3 },
  { brand: 'HYUNDAI', model: 'TUCSON', wmis: ['KM8', '5NM'], vds: ['J3CA4', 'J33A4', 'JBCAE'], plants: 'U', trims: ['SE', 'SEL', 'LIMITED'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('2.0L 4', 4), gas('2.4L 4', 4)], drives: [FWD, AWD], transmissions: AUTO, years: [2010, 2025], msrp: 27_000, weight: 4 },
  { brand: 'KIA', model: 'OPTIMA', wmis: ['KNA', '5XX'], vds: ['GT4L3', 'GM4A7', 'GT4L7'], plants: 'G', trims: ['LX', 'EX', 'SX'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('2.4L 4', 4), gas('1.6L 4', 4)], drives: [FWD], transmissions: AUTO, years: [2011, 2020], msrp: 24_000, weight: 3 },
  { brand: 'KIA', model: 'SORENTO', wmis: ['5XY'], vds: ['PG4A3', 'PK4A5', 'PGDA5'], plants: 'G', trims: ['LX', 'EX', 'SX'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('2.4L 4', 4), gas('3.3L 6', 6)], drives: [FWD, AWD], transmissions: AUTO, years: [2011, 2025], msrp: 32_000, weight: 3 },
  { brand: 'SUBARU', model: 'OUTBACK', wmis: ['4S4'], vds: ['BSANC', 'BTANC', 'BSACC'], plants: 'L', trims: ['2.5I', '2.5I PREMIUM', '2.5I LIMITED', '3.6R LIMITED'], body: 'STATION WAGON', type: 'AUTOMOBILE', powertrains: [gas('2.5L 4', 4), gas('3.6L 6', 6)], drives: [AWD], transmissions: AUTO, years: [2010, 2025], msrp: 32_000, weight: 3 },
  { brand: 'SUBARU', model: 'IMPREZA', wmis: ['JF1'], vds: ['GPAA6', 'VA1C6', 'GPAD6'], plants: 'H', trims: ['2.0I', '2.0I PREMIUM', 'WRX'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('2.0L 4', 4), gas('2.5L 4', 4)], drives: [AWD], transmissions: MOSTLY_AUTO, years: [2010, 2025], msrp: 24_000, weight: 2 },
  { brand: 'MAZDA', model: 'CX-5', wmis: ['JM3'], vds: ['KFBCM', 'KFACM', 'KFBDM'], plants: 'N', trims: ['SPORT', 'TOURING', 'GRAND TOURING'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('2.5L 4', 4), gas('2.0L 4', 4)], drives: [FWD, AWD], transmissions: AUTO, years: [2013, 2025], msrp: 29_000, weight: 3 },
  { brand: 'MAZDA', model: 'MAZDA3', wmis: ['JM1', '3MZ'], vds: ['BM1U7', 'BN1V7', 'BPBA2'], plants: 'MS', trims: ['I SPORT', 'I TOURING', 'S GRAND TOURING'], body: 'SEDAN 4D', type: 'AUTOMOBILE', powertrains: [gas('2.0L 4', 4), gas('2.5L 4', 4)], drives: [FWD], transmissions: MOSTLY_AUTO, years: [2010, 2025], msrp: 22_000, weight: 2 },
  { brand: 'VOLVO', model: 'XC90', wmis: ['YV4'], vds: ['A22PK', '102PK', 'BR0L5'], plants: 'J', trims: ['T5 MOMENTUM', 'T6 INSCRIPTION', 'T8 R-DESIGN'], body: 'SPORT UTILITY 4D', type: 'SUV', powertrains: [gas('2.0L 4', 4), hybrid('2.0L 4', 4)], drives: [AWD], transmissions: AUTO, years: [2010, 2025], msrp: 55_000, weight: 1 },
];

export interface Yard {
  city: string;
  /** Two-letter US state. */
  state: string;
  zip: string;
  /** IAAI branch number, used in its image keys. */
  branch: number;
}

/** Auction yards across the US; both auctions have a site near each of these ZIP codes. */
export const YARDS: readonly Yard[] = [
  { city: 'VALLEJO', state: 'CA', zip: '94590', branch: 530 },
  { city: 'SACRAMENTO', state: 'CA', zip: '95828', branch: 531 },
  { city: 'LOS ANGELES', state: 'CA', zip: '90058', branch: 532 },
  { city: 'SAN DIEGO', state: 'CA', zip: '92154', branch: 533 },
  { city: 'RANCHO CUCAMONGA', state: 'CA', zip: '91730', branch: 534 },
  { city: 'PHOENIX', state: 'AZ', zip: '85043', branch: 540 },
  { city: 'TUCSON', state: 'AZ', zip: '85756', branch: 541 },
  { city: 'LAS VEGAS', state: 'NV', zip: '89115', branch: 545 },
  { city: 'SALT LAKE CITY', state: 'UT', zip: '84104', branch: 547 },
  { city: 'DENVER', state: 'CO', zip: '80216', branch: 550 },
  { city: 'DALLAS', state: 'TX', zip: '75241', branch: 560 },
  { city: 'FT. WORTH', state: 'TX', zip: '76140', branch: 561 },
  { city: 'HOUSTON', state: 'TX', zip: '77073', branch: 562 },
  { city: 'SAN ANTONIO', state: 'TX', zip: '78219', branch: 563 },
  { city: 'AUSTIN', state: 'TX', zip: '78617', branch: 564 },
  { city: 'OKLAHOMA CITY', state: 'OK', zip: '73129', branch: 570 },
  { city: 'KANSAS CITY', state: 'KS', zip: '66111', branch: 575 },
  { city: 'ST. LOUIS', state: 'MO', zip: '63044', branch: 576 },
  { city: 'CHICAGO NORTH', state: 'IL', zip: '60120', branch: 580 },
  { city: 'MINNEAPOLIS', state: 'MN', zip: '55304', branch: 585 },
  { city: 'DETROIT', state: 'MI', zip: '48229', branch: 590 },
  { city: 'COLUMBUS', state: 'OH', zip: '43207', branch: 595 },
  { city: 'CLEVELAND', state: 'OH', zip: '44125', branch: 596 },
  { city: 'INDIANAPOLIS', state: 'IN', zip: '46221', branch: 600 },
  { city: 'NASHVILLE', state: 'TN', zip: '37072', branch: 605 },
  { city: 'MEMPHIS', state: 'TN', zip: '38118', branch: 606 },
  { city: 'ATLANTA', state: 'GA', zip: '30315', branch: 610 },
  { city: 'CHARLOTTE', state: 'NC', zip: '28214', branch: 615 },
  { city: 'RALEIGH', state: 'NC', zip: '27610', branch: 616 },
  { city: 'ORLANDO', state: 'FL', zip: '32824', branch: 620 },
  { city: 'MIAMI', state: 'FL', zip: '33166', branch: 621 },
  { city: 'TAMPA', state: 'FL', zip: '33610', branch: 622 },
  { city: 'JACKSONVILLE', state: 'FL', zip: '32254', branch: 623 },
  { city: 'BIRMINGHAM', state: 'AL', zip: '35022', branch: 625 },
  { city: 'NEW ORLEANS', state: 'LA', zip: '70062', branch: 630 },
  { city: 'BALTIMORE', state: 'MD', zip: '21226', branch: 635 },
  { city: 'PHILADELPHIA', state: 'PA', zip: '19153', branch: 640 },
  { city: 'PITTSBURGH', state: 'PA', zip: '15122', branch: 641 },
  { city: 'NEWARK', state: 'NJ', zip: '07105', branch: 645 },
  { city: 'LONG ISLAND', state: 'NY', zip: '11727', branch: 650 },
  { city: 'BOSTON', state: 'MA', zip: '01862', branch: 655 },
  { city: 'HARTFORD', state: 'CT', zip: '06082', branch: 656 },
  { city: 'SEATTLE', state: 'WA', zip: '98092', branch: 660 },
  { city: 'PORTLAND', state: 'OR', zip: '97230', branch: 661 },
];

/** Damage codes with how often they head a salvage lot, roughly as auction statistics show. */
export const DAMAGES: readonly (readonly [string, number])[] = [
  ['FRONT END', 34],
  ['REAR END', 11],
  ['SIDE', 8],
  ['LEFT SIDE', 5],
  ['RIGHT SIDE', 5],
  ['ALL OVER', 5],
  ['MINOR DENT/SCRATCHES', 6],
  ['HAIL', 4],
  ['WATER/FLOOD', 4],
  ['MECHANICAL', 5],
  ['NORMAL WEAR', 4],
  ['VANDALISM', 2],
  ['BURN', 1.5],
  ['BURN - ENGINE', 1],
  ['UNDERCARRIAGE', 1.5],
  ['ROLLOVER', 1],
  ['TOP/ROOF', 1],
  ['FRAME DAMAGE', 1],
  ['STRIPPED', 0.5],
  ['BIOHAZARD/CHEMICAL', 0.3],
  ['PARTIAL REPAIR', 0.5],
];

/** Damages that leave a car worth little more than its parts. */
export const SEVERE_DAMAGES: ReadonlySet<string> = new Set(['WATER/FLOOD', 'BURN', 'BURN - ENGINE', 'ROLLOVER', 'STRIPPED', 'FRAME DAMAGE', 'ALL OVER']);

export const TITLES: readonly (readonly [string, number])[] = [
  ['SALVAGE CERTIFICATE', 55],
  ['CERTIFICATE OF TITLE', 25],
  ['NON-REPAIRABLE', 6],
  ['REBUILT TITLE', 4],
  ['CERT OF TITLE-SALVAGE', 6],
  ['JUNK', 1],
  ['PARTS ONLY', 1],
];

export const COLORS: readonly (readonly [string, number])[] = [
  ['WHITE', 24],
  ['BLACK', 21],
  ['GRAY', 17],
  ['SILVER', 13],
  ['BLUE', 9],
  ['RED', 9],
  ['GREEN', 1.5],
  ['BROWN', 1],
  ['BEIGE', 1],
  ['GOLD', 1],
  ['ORANGE', 0.7],
  ['YELLOW', 0.5],
  ['BURGUNDY', 0.8],
  ['CHARCOAL', 1],
];

export const COPART_HIGHLIGHTS: readonly (readonly [string, number])[] = [
  ['Run & Drive Verified', 40],
  ['Vehicle Starts', 25],
  ['Enhanced Vehicles', 5],
  ['DEFAULT', 30],
];

export const IAAI_HIGHLIGHTS: readonly (readonly [string, number])[] = [
  ['Run & Drive', 38],
  ['Starts', 25],
  ['Stationary', 27],
  ['Engine Start Program', 6],
  ['Key', 4],
];

export const ODOMETER_TYPES: readonly (readonly [string, number])[] = [
  ['ACTUAL', 84],
  ['NOT ACTUAL', 6],
  ['EXCEEDS MECHANICAL LIMITS', 2],
  ['EXEMPT', 5],
  ['TMU', 3],
];
