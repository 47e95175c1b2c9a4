/**
 * The options the search benchmark shares with its scale-out run (bench/search.ts and
 * bench/search-scale-out.ts): how many lots, how long, how hard. One definition, one check.
 */
export const LOAD_OPTIONS = {
  lots: { type: 'string', default: '100000' },
  duration: { type: 'string', default: '10' },
  warmup: { type: 'string', default: '2' },
  connections: { type: 'string', default: '10' },
  rate: { type: 'string', default: '1000' },
  seed: { type: 'string', default: '1' },
} as const;

export interface LoadSettings {
  lots: number;
  duration: number;
  warmup: number;
  connections: number;
  rate: number;
  seed: number;
}

/** A mistake on the command line: printed with the usage, not as a crash. */
export class UsageError extends Error {}

/** The parsed LOAD_OPTIONS as numbers; a warm-up and a seed may be 0, the others at least 1. */
export function loadSettings(values: Record<keyof typeof LOAD_OPTIONS, string>): LoadSettings {
  const integer = (name: keyof typeof LOAD_OPTIONS, min: number) => {
    const raw = values[name];
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < min) throw new UsageError(`--${name} must be an integer of at least ${min}; got ${raw}`);
    return value;
  };
  return {
    lots: integer('lots', 1),
    duration: integer('duration', 1),
    warmup: integer('warmup', 0),
    connections: integer('connections', 1),
    rate: integer('rate', 1),
    seed: integer('seed', 0),
  };
}
