/** What an import did, counted as it goes. */
export interface ImportSummary {
  /** Records read (blank lines are not records; a vendor vehicle record counts once per lot). */
  read: number;
  inserted: number;
  updated: number;
  unchanged: number;
  /** Records rejected: unreadable, or not a valid lot. */
  skipped: number;
}

export interface RejectedRecord {
  line: number;
  reason: string;
  /** The record as the file had it, when the format keeps it (for the --report file). */
  source?: string;
}

export function emptySummary(): ImportSummary {
  return { read: 0, inserted: 0, updated: 0, unchanged: 0, skipped: 0 };
}

export function addSummaries(a: ImportSummary, b: ImportSummary): ImportSummary {
  return {
    read: a.read + b.read,
    inserted: a.inserted + b.inserted,
    updated: a.updated + b.updated,
    unchanged: a.unchanged + b.unchanged,
    skipped: a.skipped + b.skipped,
  };
}
