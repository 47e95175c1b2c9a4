import type { LotJson } from './lot.ts';

/** A counted search: what it answered, and what a repeat with its Idempotency-Key answers again. */
export interface CommittedSearch {
  searchId: string;
  /** Null when nothing was found: a counted "not found" search has no report. */
  reportId: string | null;
  vin: string;
  createdAt: string;
  /** The lots it found, as their JSON text (domain/lot.ts). */
  lots: LotJson[];
}

/** A row of the customer's search history. */
export interface AccountSearch {
  id: string;
  vin: string;
  createdAt: string;
  outcome: 'found' | 'not_found';
  reportId: string | null;
  tokenName: string | null;
  tokenPrefix: string | null;
  /** Made with a sandbox token (`vh_test_...`): test data, never counted. */
  sandbox: boolean;
}
