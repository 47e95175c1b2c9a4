import type { FieldError } from '../normalise-lot.ts';

/**
 * What every input format yields, one per record, in file order: a lot-shaped raw object (field
 * names of the Lot, values as the file had them or as the format's mapping turned them) or the
 * reason the record could not be read at all. Normalisation and batching are shared by every
 * format (prepare-lot.ts, import-lots.ts), so a new format only has to turn its records into
 * lot-shaped objects.
 *
 * `line` is where the record starts, as an editor numbers lines. `source` is the record as the
 * file had it, for the report of skipped records. `problems` are fields the format could not map
 * (an unknown time zone, a number that is not one); the record is skipped with them.
 */
export type SourceRecord =
  | { readonly line: number; readonly raw: unknown; readonly source?: string; readonly problems?: readonly FieldError[] }
  | { readonly line: number; readonly error: string; readonly source?: string };
