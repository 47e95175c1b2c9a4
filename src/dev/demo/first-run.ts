import { createReadStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.ts';
import type { ImportSummary } from '../../ingest/import-summary.ts';
import { IngestError } from '../../ingest/ingest-error.ts';
import { readNdjsonRecords } from '../../ingest/formats/ndjson-records.ts';
import type { Container } from '../../container.ts';

export const DEMO_EMAIL = 'demo@vinhistory.local';
export const DEMO_PLAN = 'standard';
/** The real 2010 Mercedes-Benz GL450 of Copart's sales-data sample; the banner's example search. */
export const DEMO_VIN = '4JGBF7BE5AA585531';
/** Demo vehicles with several lots each (Copart and IAAI), to show a history rather than one sale. */
export const DEMO_HISTORY_VINS = ['1HGCV1F3XLA012873', '1FTEW1EPXJFA60219', '1C4RJFAG0EC157326'] as const;
export const DEMO_LOTS_FILE = fileURLToPath(new URL('../../../demo/lots.ndjson', import.meta.url));

export interface FirstRunOptions {
  config: Config;
  services: Container;
  log: FastifyBaseLogger;
  /** Where the banner goes; the process's stdout unless a test captures it. */
  out?: { write(text: string): unknown };
  demoFile?: string;
}

export interface DemoSetup {
  summary: ImportSummary;
  email: string;
  token: string;
}

/**
 * On the first start of a development or test instance (no lots at all), loads the demo data set
 * through the ordinary importer, makes a demo account with a token, and prints how to try the API.
 * An instance that holds any lot, and every production instance, is left alone.
 */
export async function ensureDemoData(options: FirstRunOptions): Promise<DemoSetup | null> {
  const { config, services, log } = options;
  if (config.isProduction) return null;
  if ((await services.ingest.countLots()) > 0) return null;

  const file = options.demoFile ?? DEMO_LOTS_FILE;
  const input = createReadStream(file);
  let summary: ImportSummary;
  try {
    summary = await services.ingest.importRecords(readNdjsonRecords(input), {
      source: 'demo',
      onRejected: ({ line, reason }) => log.warn({ file, line, reason }, 'demo data: line skipped'),
    });
  } catch (error) {
    // A missing demo file is a packaging fault; it must not keep the API from starting.
    if (!(error instanceof IngestError && error.kind === 'cut-short')) throw error;
    log.error({ file, err: error.cause }, 'demo data: cannot read the demo file; starting without demo data');
    return null;
  } finally {
    input.destroy();
  }

  const account = await services.accounts.findOrCreate(DEMO_EMAIL);
  await services.payments.billing.ensureArranged(account, DEMO_PLAN, 'monthly');
  const { secret: token } = await services.apiTokens.issue(account.id, 'demo');
  // The log line says what happened; the token itself goes only to the terminal, never to a log.
  log.info({ lots: summary.inserted + summary.updated + summary.unchanged, account: account.id }, 'first run: demo data loaded');
  (options.out ?? process.stdout).write(banner({ config, summary, token }));
  return { summary, email: DEMO_EMAIL, token };
}

function banner({ config, summary, token }: { config: Config; summary: ImportSummary; token: string }): string {
  const searchUrl = `${config.publicBaseUrl}/api/v1/search?vin=${DEMO_VIN}`;
  const rule = '='.repeat(78);
  return [
    '',
    rule,
    '  vinhistory: first run. Demo data loaded (this happens only on an empty database,',
    '  and never with NODE_ENV=production).',
    '',
    `  Lots loaded:  ${summary.inserted} (demo/lots.ndjson)`,
    `  Account:      ${DEMO_EMAIL}, plan ${DEMO_PLAN}`,
    '  API token:    shown only this once; keep it.',
    '',
    `    ${token}`,
    '',
    '  Try it:',
    '',
    `    curl -H "Authorization: ${token}" "${searchUrl}"`,
    '',
    `  Vehicles with several lots: ${DEMO_HISTORY_VINS.join(', ')}`,
    `  API documentation: ${config.publicBaseUrl}/docs`,
    rule,
    '',
    '',
  ].join('\n');
}
