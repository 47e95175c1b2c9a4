import { Type } from '@sinclair/typebox';
import { LOT_FIELDS, type Lot } from './lot.ts';

/**
 * A lot's history (contract, "Lot history"): every state the service has seen of it, as the
 * changes between them. Storage keeps the later versions; src/history/ rebuilds the first.
 */

/** One field's change: from null in a lot's first version. `images` changes carry the lists. */
export interface FieldChange {
  readonly from: unknown;
  readonly to: unknown;
}

export type LotChanges = Record<string, FieldChange>;

/** One observation that changed the lot (or, first, brought it). */
export interface LotVersion {
  readonly observed_at: string;
  readonly source: string;
  readonly changed: LotChanges;
}

/**
 * A lot as storage keeps its history: the lot now, when and from what it was first seen, when it
 * was last seen, and the versions after the first, oldest first.
 */
export interface StoredLotHistory {
  readonly lot: Lot;
  readonly firstSeenAt: string;
  readonly lastSeenAt: string;
  readonly firstSource: string;
  readonly laterVersions: readonly LotVersion[];
}

/** The pseudo-field of a listing change (a feed saw the lot leave its auction's listing, or come back). */
export const LISTING_FIELD = 'listing';
export type ListingState = 'listed' | 'left';

/** What an import names when its caller gives no source (tests, benchmarks, direct calls). */
export const UNNAMED_SOURCE = 'unnamed';
/** The source of the first version of a lot stored before history was kept (migration 0019). */
export const BEFORE_HISTORY_SOURCE = 'before history';
/** The longest source name kept; a longer one is cut (a file's path, an operator token's name). */
export const MAX_SOURCE_CHARS = 200;

/** A source name as stored: trimmed, bounded, never empty. */
export function normaliseSource(source: string | undefined): string {
  const trimmed = (source ?? '').trim();
  if (trimmed === '') return UNNAMED_SOURCE;
  return trimmed.length > MAX_SOURCE_CHARS ? trimmed.slice(0, MAX_SOURCE_CHARS) : trimmed;
}

const sameValue = (field: string, a: unknown, b: unknown) =>
  field === 'images' ? JSON.stringify(a) === JSON.stringify(b) : a === b;

/** The fields whose value differs between two states of one lot, from the one to the other. */
export function lotChanges(before: Lot, after: Lot): LotChanges {
  const changed: LotChanges = {};
  for (const field of LOT_FIELDS) {
    if (!sameValue(field, before[field], after[field])) changed[field] = { from: before[field], to: after[field] };
  }
  return changed;
}

const ChangeSchema = Type.Object(
  {
    from: Type.Unknown({ description: 'The value before: null in a first version, or for a field that was unknown.' }),
    to: Type.Unknown({ description: 'The value after.' }),
  },
  { additionalProperties: false },
);

/** The history endpoint's answer (contract, "Lot history"). */
export const LotHistorySchema = Type.Object(
  {
    auction: Type.String({ description: 'The auction, a lower-case word.' }),
    lot_id: Type.Integer({ description: 'The lot id at that auction.' }),
    vin: Type.String({ description: "The lot's VIN." }),
    first_seen_at: Type.String({ format: 'date-time', description: 'When the service first stored the lot.' }),
    last_seen_at: Type.String({ format: 'date-time', description: 'When an import last named the lot, whether or not it changed anything.' }),
    versions: Type.Array(
      Type.Object(
        {
          observed_at: Type.String({ format: 'date-time', description: 'When the import that brought this version ran.' }),
          source: Type.String({ description: "What brought the data: a feed's name, a file's name, `admin-api:<operator token name>`, `demo`, or `before history` for lots stored before history was kept." }),
          changed: Type.Record(Type.String(), ChangeSchema, {
            description:
              'What this version changed, by field: `{"from": <value or null>, "to": <value>}`. The first version has every known field (from null); a later one only what it changed. ' +
              'Fields are the Lot\'s, plus `listing` (`listed` or `left`) when a feed saw the lot leave its auction\'s listing or come back.',
          }),
        },
        { additionalProperties: false },
      ),
      { description: 'Oldest first.' },
    ),
  },
  { $id: 'LotHistory', title: 'LotHistory', additionalProperties: false },
);
