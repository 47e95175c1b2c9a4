import { emptySummary, type ImportSummary } from '../../ingest/import-summary.ts';
import { IngestError } from '../../ingest/ingest-error.ts';
import type { IngestService } from '../../ingest/ingest-service.ts';
import { startProgress } from '../../ingest/progress.ts';
import type { SourceRecord } from '../../ingest/sources/source-record.ts';
import { generateLots, VinReservoir } from './synthetic-lots.ts';

const SAMPLE_VINS = 5;

export interface SeedLotsOptions {
  count: number;
  seed: number;
  batchSize: number;
  /** Show a progress bar (or progress lines) on stderr. */
  progress: boolean;
  /** Stops writing: the batch in hand is stored, and the outcome says `interrupted`. */
  signal: AbortSignal;
  /** Into an empty catalogue: build the lots' secondary indexes after the load (ingest-service.ts). */
  deferIndexes?: boolean;
}

export interface SeedOutcome {
  summary: ImportSummary;
  /** A few of the VINs written, to search for. */
  sampleVins: readonly string[];
  interrupted: boolean;
}

async function* syntheticRecords(count: number, seed: number, sample: VinReservoir): AsyncGenerator<SourceRecord> {
  let line = 0;
  for (const lot of generateLots({ count, seed, onVehicle: (vin) => sample.offer(vin) })) yield { line: ++line, raw: lot };
}

/**
 * `vinhistory seed`: synthetic lots through the importer's own path (normalised, upserted by
 * (auction, lot_id) in batches), so that seeding the same lots again the same day changes nothing.
 */
export async function seedLots(ingest: IngestService, options: SeedLotsOptions): Promise<SeedOutcome> {
  const sample = new VinReservoir(SAMPLE_VINS, options.seed);
  const summary = emptySummary();
  const progress = startProgress(
    // Rows stand in for bytes: the total is known from the start.
    { label: 'seed', summary, bytesRead: () => summary.read, totalBytes: options.count, unit: 'rows' },
    { enabled: options.progress },
  );
  let interrupted = false;
  try {
    await ingest.importRecords(syntheticRecords(options.count, options.seed, sample), {
      bulkLoad: true,
      deferIndexes: options.deferIndexes === true,
      source: 'seed',
      batchSize: options.batchSize,
      summary,
      signal: options.signal,
      // A synthetic lot that fails normalisation is a bug of the generator, not bad input.
      onRejected: ({ line, reason }) => {
        throw new Error(`synthetic lot ${line} is not a valid lot: ${reason}`);
      },
    });
  } catch (error) {
    if (!(error instanceof IngestError && error.kind === 'interrupted')) throw error;
    interrupted = true;
  } finally {
    progress.stop();
  }
  return { summary, sampleVins: sample.vins, interrupted };
}
