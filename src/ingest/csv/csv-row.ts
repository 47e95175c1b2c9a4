/**
 * What both CSV readers yield (csv-rows.ts, the fast one, and csv-parse-rows.ts, which it hands
 * the hard files to), one per record in file order: the header, a row, or a record that is not a
 * row, with the reason.
 */
export type CsvRow =
  | { kind: 'header'; line: number; values: string[] }
  | { kind: 'row'; line: number; values: string[]; source: string }
  | { kind: 'bad'; line: number; reason: string; source: string };

export interface CsvRowsOptions {
  delimiter?: string;
}
