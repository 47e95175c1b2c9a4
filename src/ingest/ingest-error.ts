import { emptySummary, type ImportSummary } from './import-summary.ts';

/**
 * Every way an import can fail short of a fault (a database error, a bug), one closed list: the
 * CLI turns it into its messages and exit status, the admin endpoint into its statuses.
 */
export type IngestErrorKind =
  /** The input cannot be opened, or its first bytes cannot be read (no such file, a broken gzip header): nothing was read. */
  | 'unreadable'
  /** The input holds nothing at all: nothing was read. */
  | 'empty'
  /** The input is not lot data, or not in the form asked for (an HTML page, a CSV no mapping fits): nothing was read. */
  | 'refused'
  /** Reading failed part-way (a truncated file, a broken connection): what was read before the failure is stored. */
  | 'cut-short'
  /** A stop was asked for (Ctrl-C): what was read before is stored, and a re-run finishes the job. */
  | 'interrupted';

export class IngestError extends Error {
  constructor(
    readonly kind: IngestErrorKind,
    message: string,
    /** What was stored before the failure: nothing, unless the input was cut short or interrupted. */
    readonly summary: ImportSummary = emptySummary(),
    /** The last line read before the failure; 0 when nothing could be read. */
    readonly afterLine = 0,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'IngestError';
  }
}

/** The reason of a failure below the importer (a stream's, a parser's), in words. */
export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
