import type { Lot } from './lot.ts';
import { LISTING_FIELD, type LotVersion } from './lot-history.ts';

/**
 * The warning signs a buyer must not miss, read from a vehicle's lots. Pure rules over the values
 * the auctions write (Copart's and IAAI's words, in any case, with or without their short codes),
 * so that the report page and its PDF show the same flags; the JSON keeps the lots as they are.
 */
export type RedFlagKind =
  | 'odometer-not-actual'
  | 'odometer-exempt'
  | 'odometer-exceeds-limits'
  | 'odometer-rollback'
  | 'damage-flood'
  | 'damage-fire'
  | 'damage-hail'
  | 'damage-biohazard'
  | 'damage-rollover'
  | 'damage-frame'
  | 'title-salvage'
  | 'title-rebuilt'
  | 'title-non-repairable'
  | 'title-junk'
  | 'title-destruction'
  | 'relisted'
  | 'keys-missing'
  // Read from a lot's kept history (lot history, issue 29).
  | 'history-odometer-changed'
  | 'history-title-washed'
  | 'history-relisted-no-sale';

/** Which lot a flag was read from. */
export interface LotRef {
  auction: string;
  lotId: number;
  saleDate: string | null;
}

export interface RedFlag {
  kind: RedFlagKind;
  /** The lots that show the sign, in the order of the report (newest sale first). */
  lots: LotRef[];
  /** For a rollback: the higher reading first, then the later, lower one. */
  readings?: { from: { odometer: number; lot: LotRef }; to: { odometer: number; lot: LotRef } };
}

/** The order flags are shown in: the odometer and title first, as they decide a price most. */
export const RED_FLAG_ORDER: readonly RedFlagKind[] = [
  'odometer-rollback',
  'history-odometer-changed',
  'odometer-not-actual',
  'odometer-exceeds-limits',
  'odometer-exempt',
  'history-title-washed',
  'title-destruction',
  'title-non-repairable',
  'title-junk',
  'title-salvage',
  'title-rebuilt',
  'damage-flood',
  'damage-fire',
  'damage-biohazard',
  'damage-rollover',
  'damage-frame',
  'damage-hail',
  'relisted',
  'history-relisted-no-sale',
  'keys-missing',
];

/** Upper-case letters and digits only, single spaces: "WATER/FLOOD" -> "WATER FLOOD". */
function words(value: string | null): string {
  return value === null ? '' : value.toUpperCase().replace(/[^A-Z0-9]+/g, ' ').trim();
}

/** Copart's odometer brands (A, N, E, plus the "T"/"TMU" true-mileage-unknown some states use) and their words. */
export function odometerFlag(type: string | null): RedFlagKind | null {
  const text = words(type);
  if (text === '') return null;
  if (/\bEXCEED|\bMECHANICAL LIMIT/.test(text) || text === 'M' || text === 'X ML') return 'odometer-exceeds-limits';
  if (/\bNOT ACTUAL\b|\bNOTACTUAL\b|\bTMU\b|TRUE MILEAGE UNKNOWN|\bINACCURATE\b/.test(text) || text === 'N' || text === 'T') return 'odometer-not-actual';
  if (/\bEXEMPT\b/.test(text) || text === 'E') return 'odometer-exempt';
  return null;
}

const DAMAGE_RULES: readonly [RedFlagKind, RegExp][] = [
  ['damage-flood', /\bFLOOD|\bWATER\b|\bSUBMERG/],
  ['damage-fire', /\bFIRE\b|\bBURN|\bBURNT\b/],
  ['damage-hail', /\bHAIL\b/],
  ['damage-biohazard', /\bBIO ?HAZARD|\bBIOHAZ/],
  ['damage-rollover', /\bROLL ?OVER\b/],
  ['damage-frame', /\bFRAME\b/],
];

/** The flags of one damage description (Copart's "WATER/FLOOD", "BURN - ENGINE"; IAAI's "Flood", "Frame Damage"). */
export function damageFlags(damage: string | null): RedFlagKind[] {
  const text = words(damage);
  if (text === '') return [];
  return DAMAGE_RULES.filter(([, pattern]) => pattern.test(text)).map(([kind]) => kind);
}

/**
 * The flags of a title document: Copart writes "SC - SALVAGE CERTIFICATE (CA)", "NR - NON-REPAIRABLE
 * (FL)", "CD - CERTIFICATE OF DESTRUCTION (TX)", or only the code; IAAI "Salvage Certificate (TX)",
 * "Rebuilt", "Junk". A clean title ("CT - CERTIFICATE OF TITLE", "Clear") raises none.
 */
export function titleFlags(document: string | null): RedFlagKind[] {
  const text = words(document);
  if (text === '') return [];
  const code = /^([A-Z]{2})\b/.exec(text)?.[1];
  const flags = new Set<RedFlagKind>();
  if (/\bDESTRUCT|\bPARTS ONLY\b|\bSCRAP\b/.test(text) || code === 'CD') flags.add('title-destruction');
  if (/\bNON ?REPAIRABLE|\bNONREPAIRABLE|\bIRREPARABLE\b|\bNOT REPAIRABLE\b/.test(text) || code === 'NR') flags.add('title-non-repairable');
  if (/\bJUNK\b|\bDISMANTLE/.test(text) || code === 'JK') flags.add('title-junk');
  if (/\bREBUIL|\bRECONSTRUCT|\bREBUILDABLE\b|\bPRIOR SALVAGE\b/.test(text) || code === 'RB') flags.add('title-rebuilt');
  else if (/\bSALVAGE\b/.test(text) || code === 'SC' || code === 'SV') flags.add('title-salvage');
  return [...flags];
}

/** "NO", "N", "Missing", "No keys": a missing key costs a buyer a programmed one, or the car. */
export function keysMissing(keys: string | null): boolean {
  const text = words(keys);
  return /^(NO|N|NONE|MISSING|ABSENT|NO KEYS?|KEYS? MISSING|FALSE)$/.test(text);
}

function refOf(lot: Lot): LotRef {
  return { auction: lot.auction, lotId: lot.lot_id, saleDate: lot.sale_date };
}

function timeOf(lot: Lot): number | null {
  if (lot.sale_date === null) return null;
  const time = Date.parse(lot.sale_date);
  return Number.isNaN(time) ? null : time;
}

const YEAR_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * The odometer going down from one sale to a later one: the highest reading before is compared with
 * each later one. A reading of 0 is the auctions' "not read", not a reading. Returns the largest drop.
 */
export function odometerRollback(lots: readonly Lot[]): RedFlag['readings'] | null {
  const read = lots
    .map((lot) => ({ lot, time: timeOf(lot), odometer: lot.odometer }))
    .filter((entry): entry is { lot: Lot; time: number; odometer: number } => entry.time !== null && entry.odometer !== null && entry.odometer > 0)
    .sort((a, b) => a.time - b.time);
  let highest: (typeof read)[number] | null = null;
  let worst: { from: (typeof read)[number]; to: (typeof read)[number] } | null = null;
  for (const entry of read) {
    if (highest !== null && entry.time > highest.time && entry.odometer < highest.odometer) {
      if (worst === null || highest.odometer - entry.odometer > worst.from.odometer - worst.to.odometer) worst = { from: highest, to: entry };
    }
    if (highest === null || entry.odometer >= highest.odometer) highest = entry;
  }
  if (worst === null) return null;
  return {
    from: { odometer: worst.from.odometer, lot: refOf(worst.from.lot) },
    to: { odometer: worst.to.odometer, lot: refOf(worst.to.lot) },
  };
}

/** Lots sold within a year of another sale of the same vehicle: bought and put up again. */
export function relistedLots(lots: readonly Lot[]): Lot[] {
  const dated = lots
    .map((lot) => ({ lot, time: timeOf(lot) }))
    .filter((entry): entry is { lot: Lot; time: number } => entry.time !== null)
    .sort((a, b) => a.time - b.time);
  const within = new Set<Lot>();
  for (let i = 1; i < dated.length; i++) {
    const previous = dated[i - 1]!;
    const current = dated[i]!;
    const sameLot = previous.lot.auction === current.lot.auction && previous.lot.lot_id === current.lot.lot_id;
    if (!sameLot && current.time - previous.time <= YEAR_MS) {
      within.add(previous.lot);
      within.add(current.lot);
    }
  }
  return lots.filter((lot) => within.has(lot));
}

/** The key a lot's versions are given to redFlags by. */
export const historyKeyOf = (lot: Pick<Lot, 'auction' | 'lot_id'>) => `${lot.auction}/${lot.lot_id}`;

/** A change of one field in a version, when it has one. */
function changeOf(version: LotVersion, field: string): { from: unknown; to: unknown } | undefined {
  return Object.prototype.hasOwnProperty.call(version.changed, field) ? version.changed[field] : undefined;
}

/**
 * The signs only a lot's history shows (its versions after the first):
 * - the odometer reading of one lot changed from one known reading (above 0) to another;
 * - the title washed: a version whose document turns from a branded title (salvage, non-repairable,
 *   junk, destruction) to one that carries no brand;
 * - put up again after a run without a sale: the sale date moved later after the earlier date had
 *   passed, or the lot came back to its auction's listing after leaving it.
 */
export function historyFlagsOf(versions: readonly LotVersion[]): RedFlagKind[] {
  const kinds = new Set<RedFlagKind>();
  for (const version of versions.slice(1)) {
    const odometer = changeOf(version, 'odometer');
    if (odometer && typeof odometer.from === 'number' && odometer.from > 0 && typeof odometer.to === 'number' && odometer.to !== odometer.from) {
      kinds.add('history-odometer-changed');
    }
    const document = changeOf(version, 'document');
    if (document && typeof document.from === 'string' && typeof document.to === 'string') {
      const before = titleFlags(document.from).filter((kind) => kind !== 'title-rebuilt');
      if (before.length > 0 && titleFlags(document.to).length === 0) kinds.add('history-title-washed');
    }
    const sale = changeOf(version, 'sale_date');
    if (sale && typeof sale.from === 'string' && typeof sale.to === 'string' && sale.from < version.observed_at && sale.to > sale.from) {
      kinds.add('history-relisted-no-sale');
    }
    const listing = changeOf(version, LISTING_FIELD);
    if (listing && listing.from === 'left' && listing.to === 'listed') kinds.add('history-relisted-no-sale');
  }
  return [...kinds];
}

/**
 * Every red flag of a vehicle's lots, in RED_FLAG_ORDER, each with the lots that show it; with
 * `histories` (each lot's versions by historyKeyOf, as of the report's time), the history's too.
 */
export function redFlags(lots: readonly Lot[], histories?: ReadonlyMap<string, readonly LotVersion[]>): RedFlag[] {
  const found = new Map<RedFlagKind, RedFlag>();
  const add = (kind: RedFlagKind, lot: Lot) => {
    const flag = found.get(kind) ?? { kind, lots: [] };
    if (!flag.lots.some((ref) => ref.auction === lot.auction && ref.lotId === lot.lot_id)) flag.lots.push(refOf(lot));
    found.set(kind, flag);
  };
  for (const lot of lots) {
    const odometer = odometerFlag(lot.odometer_type);
    if (odometer) add(odometer, lot);
    for (const kind of [...damageFlags(lot.primary_damage), ...damageFlags(lot.secondary_damage)]) add(kind, lot);
    for (const kind of titleFlags(lot.document)) add(kind, lot);
    if (keysMissing(lot.keys)) add('keys-missing', lot);
    const versions = histories?.get(historyKeyOf(lot));
    if (versions) for (const kind of historyFlagsOf(versions)) add(kind, lot);
  }
  const rollback = odometerRollback(lots);
  if (rollback) found.set('odometer-rollback', { kind: 'odometer-rollback', lots: [rollback.from.lot, rollback.to.lot], readings: rollback });
  const relisted = relistedLots(lots);
  if (relisted.length > 0) found.set('relisted', { kind: 'relisted', lots: relisted.map(refOf) });
  return RED_FLAG_ORDER.flatMap((kind) => found.get(kind) ?? []);
}
