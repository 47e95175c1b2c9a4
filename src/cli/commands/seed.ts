import { InvalidArgumentError, type Command } from 'commander';
import { BULK_LOAD_BATCH_SIZE } from '../../ingest/import-lots.ts';
import type { ImportSummary } from '../../ingest/import-summary.ts';
import { seedLots, type SeedOutcome } from '../../dev/seed/seed-lots.ts';
import { MAX_SYNTHETIC_LOTS } from '../../dev/seed/synthetic-lots.ts';
import { CliError } from '../cli-error.ts';
import { mayDeferIndexes, withDatabase } from '../database.ts';
import { parseNonNegativeInteger, parsePositiveInteger } from '../options.ts';

interface SeedOptions {
  lots: number;
  seed: number;
  batchSize: number;
  json?: boolean;
  progress: boolean;
}

const EXIT_INTERRUPTED = 130;

const HELP_AFTER = `
Writes synthetic lots for load tests and demos (src/dev/seed/synthetic-lots.ts): valid VINs with
check digits, one to four lots per vehicle at Copart and IAAI, plausible damage, odometers, prices,
photo URLs, and sale dates in the five years before today. The same --seed gives the same vehicles
and lots (on another day their sale dates move with today), and runs with different seeds do not
collide. Lots go through the importer's own path (normalised, upserted by (auction, lot_id) in
batches), so seeding the same lots again the same day changes nothing.

stdout: the summary, then a few of the VINs written, to search for.`;

function parseLotCount(text: string): number {
  const count = parsePositiveInteger(text);
  if (count > MAX_SYNTHETIC_LOTS) throw new InvalidArgumentError(`Expected at most ${MAX_SYNTHETIC_LOTS} lots.`);
  return count;
}

export function registerSeedCommand(program: Command): void {
  program
    .command('seed')
    .description('write N synthetic, realistic lots (for load tests and demos)')
    .requiredOption('--lots <n>', `how many lots (at most ${MAX_SYNTHETIC_LOTS})`, parseLotCount)
    .option('--seed <n>', 'seed of the generator: the same seed gives the same lots', parseNonNegativeInteger, 1)
    .option('--batch-size <n>', 'lots per transaction', parsePositiveInteger, BULK_LOAD_BATCH_SIZE)
    .option('--json', 'print the summary and the sample VINs as one JSON object')
    .option('--no-progress', 'no progress bar or progress lines')
    .addHelpText('after', HELP_AFTER)
    .action(async (options: SeedOptions) => {
      const stop = new AbortController();
      const onSignal = () => {
        if (stop.signal.aborted) process.exit(EXIT_INTERRUPTED);
        stop.abort();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      let outcome: SeedOutcome;
      try {
        outcome = await withDatabase(({ config, services }) =>
          seedLots(services.ingest, {
            deferIndexes: mayDeferIndexes(config),
            count: options.lots,
            seed: options.seed,
            batchSize: options.batchSize,
            progress: options.progress && !(options.json && !process.stderr.isTTY),
            signal: stop.signal,
          }),
        );
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
      print(outcome.summary, outcome.sampleVins, options);
      if (outcome.interrupted) throw new CliError('interrupted: run the same command again to finish (lots already written count as unchanged).', EXIT_INTERRUPTED);
    });
}

function print(summary: ImportSummary, vins: readonly string[], options: SeedOptions): void {
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ ...summary, seed: options.seed, sample_vins: vins })}\n`);
    return;
  }
  process.stdout.write(
    `seed ${options.seed}: read ${summary.read}, inserted ${summary.inserted}, updated ${summary.updated}, unchanged ${summary.unchanged}, skipped ${summary.skipped}\n`,
  );
  process.stdout.write(`sample VINs: ${vins.join(' ')}\n`);
}
