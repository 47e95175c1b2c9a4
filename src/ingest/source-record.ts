/**
 * What every input format yields, one per record, in file order: a lot-shaped raw object (field
 * names of the Lot, values as the file had them) or the reason the record could not be read at
 * all. Normalisation and batching are shared by every format (import-lots.ts), so a new format
 * only has to turn its records into lot-shaped objects.
 */
export type SourceRecord =
  | { readonly line: number; readonly raw: unknown }
  | { readonly line: number; readonly error: string };
