import type { Migration } from 'kysely';
import * as initial from './0001-initial.ts';
import * as seedPlans from './0002-seed-plans.ts';
import * as customerAccounts from './0003-customer-accounts.ts';
import * as operatorTokens from './0004-operator-tokens.ts';
import * as stripeEventOrder from './0005-stripe-event-order.ts';
import * as mailQueue from './0006-mail-queue.ts';
import * as watchesWebhooks from './0007-watches-webhooks.ts';
import * as photoArchive from './0008-photo-archive.ts';
import * as sandboxTokens from './0009-sandbox-tokens.ts';
import * as reportLanguages from './0010-report-languages.ts';
import * as webJourney from './0011-web-journey.ts';
import * as brands from './0012-brands.ts';
import * as subscriptionInForceIndex from './0013-subscription-in-force-index.ts';
import * as brandLimits from './0014-brand-limits.ts';
import * as operatorAudit from './0015-operator-audit.ts';
import * as sharedAssets from './0016-shared-assets.ts';
import * as webhookMailAndRetention from './0017-webhook-mail-and-retention.ts';
import * as market from './0018-market.ts';
// Issue 29: lot history.
import * as lotHistory from './0019-lot-history.ts';
import * as reportSignatures from './0020-report-signatures.ts';
// Feeds the service pulls itself (issue 25).
import * as feeds from './0021-feeds.ts';
// Batches (issue 26).
import * as batches from './0022-batches.ts';
// The catalogue read in order by make, and make and model (issue 24, at scale).
import * as catalogueOrderIndexes from './0023-catalogue-order-indexes.ts';
import * as lotSightings from './0024-lot-sightings.ts';
import * as namedReportSnapshots from './0025-named-report-snapshots.ts';
import * as marketGroups from './0026-market-groups.ts';
import * as catalogueModelOrder from './0027-catalogue-model-order.ts';
// SQLite: the searches' writes in a file of their own (issue 25).
import * as searchesFile from './0028-searches-file.ts';

/**
 * The one migration set, for SQLite and PostgreSQL alike. Listed here rather than read from the
 * folder so that it works the same under tsx, vitest and a bundler. Names sort in run order.
 */
export const migrations: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-seed-plans': seedPlans,
  '0003-customer-accounts': customerAccounts,
  '0004-operator-tokens': operatorTokens,
  '0005-stripe-event-order': stripeEventOrder,
  '0006-mail-queue': mailQueue,
  '0007-watches-webhooks': watchesWebhooks,
  '0008-photo-archive': photoArchive,
  '0009-sandbox-tokens': sandboxTokens,
  '0010-report-languages': reportLanguages,
  '0011-web-journey': webJourney,
  '0012-brands': brands,
  '0013-subscription-in-force-index': subscriptionInForceIndex,
  '0014-brand-limits': brandLimits,
  '0015-operator-audit': operatorAudit,
  '0016-shared-assets': sharedAssets,
  '0017-webhook-mail-and-retention': webhookMailAndRetention,
  '0018-market': market,
  // Issue 29: lot history.
  '0019-lot-history': lotHistory,
  '0020-report-signatures': reportSignatures,
  // Feeds the service pulls itself (issue 25).
  '0021-feeds': feeds,
  // Batches (issue 26).
  '0022-batches': batches,
  // The catalogue read in order by make, and make and model (issue 24, at scale).
  '0023-catalogue-order-indexes': catalogueOrderIndexes,
  // Issue 29: sightings of unchanged lots, beside the lots (re-imports).
  '0024-lot-sightings': lotSightings,
  // Issue 29, item 7: report snapshots that name lot versions.
  '0025-named-report-snapshots': namedReportSnapshots,
  // The market's groups and their generations, which the import bumps (issue 24, the market at scale).
  '0026-market-groups': marketGroups,
  // The catalogue read in order by make and model, newest first (issue 24, catalogue throughput).
  '0027-catalogue-model-order': catalogueModelOrder,
  // SQLite: the tables a search's commit writes move to the searches file (issue 25); PostgreSQL: nothing.
  '0028-searches-file': searchesFile,
};
