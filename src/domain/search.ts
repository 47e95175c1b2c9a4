import type { LotJson } from './lot.ts';

/**
 * What a counted call was (0018): a search by VIN, a lookup by lot, a catalogue search, a market
 * value or a lot's history. All count against the same quota; usage shows them by kind.
 */
export const SEARCH_KINDS = ['search', 'lot', 'catalogue', 'market', 'history'] as const;
export type SearchKind = (typeof SEARCH_KINDS)[number];

/** A counted search: what it answered, and what a repeat with its Idempotency-Key answers again. */
export interface CommittedSearch {
  searchId: string;
  /** Null when nothing was found: a counted "not found" search has no report. */
  reportId: string | null;
  vin: string;
  createdAt: string;
  /** The lots it found, as their JSON text (domain/lot.ts). */
  lots: LotJson[];
  /**
   * A replay whose report names lot versions (0025): the snapshot's text, whose lots are rebuilt
   * after the commit (`lots` is empty until then). Absent otherwise.
   */
  namedSnapshot?: string;
}

/** A row of the customer's search history. */
export interface AccountSearch {
  id: string;
  /** The VIN asked for; for a call by anything else, what it asked (a lot `copart/12345678`, a query). */
  vin: string;
  createdAt: string;
  outcome: 'found' | 'not_found';
  kind: SearchKind;
  reportId: string | null;
  tokenName: string | null;
  tokenPrefix: string | null;
  /** Made with a sandbox token (`vh_test_...`): test data, never counted. */
  sandbox: boolean;
}
