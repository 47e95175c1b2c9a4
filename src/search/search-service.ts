import { billingPeriodAt, type BillingPeriod } from '../limits/billing-period.ts';
import type { LimitsSnapshot } from '../limits/limit-headers.ts';
import type { RateDecision, RateLimiter } from '../limits/rate/rate-limiter.ts';
import { lotJson, type Lot, type LotJson } from '../domain/lot.ts';
import { checkAuction, checkLotId, lotSubject, type LotRef } from '../domain/lot-ref.ts';
import { canSearch, sameSubscription, type SearchPrincipal, type TokenPrincipal } from '../domain/principal.ts';
import type { ReportAnswer } from '../domain/report.ts';
import type { SearchKind } from '../domain/search.ts';
import { checkVin } from '../domain/vin.ts';
import type { NamedLot } from '../domain/report-snapshot.ts';
import { SANDBOX_ALLOWANCE, SANDBOX_AUCTIONS, sandboxLots, sandboxVinOfLot } from './sandbox/catalogue.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import type { CommitResult, SearchToCommit } from '../storage/search-commit.ts';
import type { Metrics } from '../observability/metrics.ts';
import { notFoundMessage } from './outcome-messages.ts';

/**
 * What a search answers. Every outcome past the rate check carries the account's limits as they
 * stand after it; the rate check's own refusal carries them too, uncounted.
 */
export type SearchOutcome =
  | { kind: 'found'; report: ReportAnswer; replayed: boolean; limits: LimitsSnapshot }
  /** `lot` is set for a lookup by lot: no VIN may be known then (`vin` names the lot). */
  | { kind: 'not_found'; vin: string; lot: LotRef | null; replayed: boolean; limits: LimitsSnapshot }
  | { kind: 'rate_limited'; limits: LimitsSnapshot }
  | { kind: 'quota_exceeded'; limits: LimitsSnapshot }
  /** `original` says what the key was used for: `VIN <vin>` or `lot <auction>/<id>`. */
  | { kind: 'idempotency_conflict'; original: string }
  /** The token was revoked (or expired) after this process last read it: what a fresh request gets (401). */
  | { kind: 'unauthenticated' }
  /** The account's subscription ended after this process last read it (402). */
  | { kind: 'subscription_required' }
  | { kind: 'invalid_input'; field: 'vin' | 'auction' | 'lot_id' | 'Idempotency-Key'; messages: string[] };

/** The outcomes of any counted call that answer no body of its own: the limits, the key, the principal. */
export type CountedRefusal = Exclude<SearchOutcome, { kind: 'found' | 'not_found' }>;

/**
 * A counted call that stores no report (contract, "Additions to v1, second round": a catalogue
 * search, a market value, a lot's history): what kind it is, and its query in one canonical form,
 * so that "the same query" of the Idempotency-Key rule is equality of the two texts (the route
 * orders the parameters and normalises their values).
 */
export interface CountedCall {
  kind: Exclude<SearchKind, 'search' | 'lot'>;
  query: string;
}

/** What a counted call's own work answers: its body, or that nothing was found (a counted 404, with its message). */
export type CountedAnswer<T> = { kind: 'found'; body: T } | { kind: 'not_found'; message: string };

/**
 * What a counted call answers. A repeat of its Idempotency-Key within 24 hours (`replayed`) is not
 * counted again; having no report to replay, its body is the call's answer computed afresh.
 */
export type CountedOutcome<T> =
  | { kind: 'found'; body: T; replayed: boolean; limits: LimitsSnapshot }
  | { kind: 'not_found'; message: string; replayed: boolean; limits: LimitsSnapshot }
  | CountedRefusal;

type PrincipalChanged = { kind: 'principal_changed'; admitted: RateDecision };

/**
 * A batch item's search whose commit found the item answered already (a run of it that committed
 * before: search-commit.ts): nothing was counted or written. Only a search given `pace.batchItem`.
 */
export type ItemDone = { kind: 'item_done' };

/** What one run of a search answers: an outcome, or that its commit refused the principal it ran for. */
type Attempt = SearchOutcome | ItemDone | PrincipalChanged;

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
const INVALID = Symbol('invalid');
const TOUCH_INTERVAL_MS = 60_000;
/** How stale the list of live auctions may be when the word asked for is in it; an unknown word re-reads it (at most once a second). */
const AUCTIONS_TTL_MS = 60_000;
const AUCTIONS_RECHECK_MS = 1_000;

/** The rate and quota a search is held to, and where its billing periods start. */
interface Allowance {
  ratePerSecond: number;
  monthlyQuota: number;
  periodAnchor: Date;
}

/** What one search asks for, once its input is valid: a VIN, or a lot whose VIN is read after the rate check. */
type Subject = { kind: 'vin'; vin: string } | { kind: 'lot'; lot: LotRef };

/** A search's lots as JSON text, and as the versions its report's snapshot names (null: the report copies them). */
type FoundLots = { lots: LotJson[]; named: readonly NamedLot[] | null };

/**
 * How a search is admitted to the account's per-second window: by default up to the plan's rate;
 * a batch's item (src/batches/) only while the window holds fewer than `rateLimit` searches, so
 * that batches take no more than their share and never the slots live searches need.
 */
export interface SearchPace {
  rateLimit?: number;
  /** The batch item this search is: its result is written in the search's own commit (search-commit.ts). */
  batchItem?: { batchId: string; index: number };
}

/** Where principals are re-read when a commit finds that the one a search ran for no longer holds. */
export interface PrincipalSource {
  reload(principal: TokenPrincipal, now?: Date): Promise<TokenPrincipal | null>;
  touch(tokenId: string, now?: Date): Promise<void>;
}

/** A commit that finds its principal stale re-reads it and runs again; a principal changing this often is a fault. */
const MAX_PRINCIPAL_RELOADS = 3;

export interface SearchServiceOptions {
  repos: Repositories;
  principals: PrincipalSource;
  rateLimiter: RateLimiter;
  metrics: Metrics;
  publicBaseUrl: string;
  now?: () => Date;
  /** Called when a background write (last-used time) fails; it must not fail the search. */
  onBackgroundError?: (error: unknown) => void;
  /**
   * The photo archive's step: each lot's image URLs, in order, with archived ones replaced by
   * their copies' URLs (media/media-service.ts). Without it the lots keep their stored URLs.
   */
  resolveImages?: (lots: Lot[]) => Promise<Lot[]>;
}

/**
 * One search, in the contract's order: (authentication and subscription are checked before this
 * is called) VIN validation (or auction and lot id), per-second rate, monthly quota, lookup. The
 * quota is counted in the same transaction as the search record and the report. A sandbox token
 * searches the sandbox catalogue instead of the lots, and its search is recorded but not counted.
 */
export class SearchService {
  private readonly now: () => Date;
  private auctions: { list: string[]; readAt: number } | null = null;

  /** The searches metric's three series, bound once (prom-client hashes a label set on every inc). */
  private readonly counted: Record<'found' | 'not_found' | 'replayed', { inc(): void }>;

  constructor(private readonly options: SearchServiceOptions) {
    this.now = options.now ?? (() => new Date());
    const { searches } = options.metrics;
    this.counted = { found: searches.labels({ outcome: 'found' }), not_found: searches.labels({ outcome: 'not_found' }), replayed: searches.labels({ outcome: 'replayed' }) };
  }

  /** A search by VIN (POST or GET /api/v1/search); with `pace`, a batch item's (item_done: it had its result already). */
  search(principal: SearchPrincipal, rawVin: string, rawIdempotencyKey: string | undefined): Promise<SearchOutcome>;
  search(principal: SearchPrincipal, rawVin: string, rawIdempotencyKey: string | undefined, pace: SearchPace): Promise<SearchOutcome | ItemDone>;
  search(principal: SearchPrincipal, rawVin: string, rawIdempotencyKey: string | undefined, pace?: SearchPace): Promise<SearchOutcome | ItemDone> {
    return this.runFor(principal, async (current, admitted) => {
      const vinCheck = checkVin(rawVin);
      if (!vinCheck.ok) return { kind: 'invalid_input', field: 'vin', messages: vinCheck.errors };
      return this.run(current, { kind: 'vin', vin: vinCheck.vin }, rawIdempotencyKey, admitted, pace);
    });
  }

  /**
   * A lookup by lot (GET /api/v1/lots/{auction}/{lot_id}): a search for the lot's VIN in every
   * other respect. The auction must be one the service holds lots from (a sandbox token: one of
   * the catalogue's); a lot that is not known is a counted "not found".
   */
  searchByLot(principal: SearchPrincipal, rawAuction: string, rawLotId: string, rawIdempotencyKey: string | undefined): Promise<SearchOutcome>;
  searchByLot(principal: SearchPrincipal, rawAuction: string, rawLotId: string, rawIdempotencyKey: string | undefined, pace: SearchPace): Promise<SearchOutcome | ItemDone>;
  searchByLot(principal: SearchPrincipal, rawAuction: string, rawLotId: string, rawIdempotencyKey: string | undefined, pace?: SearchPace): Promise<SearchOutcome | ItemDone> {
    return this.runFor(principal, async (current, admitted) => {
      const auctionCheck = checkAuction(rawAuction, current.sandbox ? SANDBOX_AUCTIONS : await this.knownAuctions(rawAuction));
      if (!auctionCheck.ok) return { kind: 'invalid_input', field: 'auction', messages: auctionCheck.errors };
      const lotIdCheck = checkLotId(rawLotId);
      if (!lotIdCheck.ok) return { kind: 'invalid_input', field: 'lot_id', messages: lotIdCheck.errors };
      return this.run(current, { kind: 'lot', lot: { auction: auctionCheck.auction, lotId: lotIdCheck.lotId } }, rawIdempotencyKey, admitted, pace);
    });
  }

  /**
   * Runs a search for a principal that may come from the search path's cache (contract, "Tokens
   * and caching"), so that every answer is the one a fresh read would give:
   * - a commit re-checks the principal itself and writes nothing when it no longer holds;
   * - a refusal decided before any commit (invalid input, the rate) is confirmed by reading the
   *   principal afresh, so that a revoked token still gets its 401 before every other check.
   * A changed principal is read afresh and the search runs again. The rate decision of the first
   * run stands (the request was admitted, and counted in the window, under the plan it arrived with).
   */
  private async runFor<O extends { kind: string }>(
    principal: SearchPrincipal,
    attempt: (principal: SearchPrincipal, admitted: RateDecision | null) => Promise<O | PrincipalChanged>,
  ): Promise<O | { kind: 'unauthenticated' } | { kind: 'subscription_required' }> {
    let current = principal;
    let admitted: RateDecision | null = null;
    for (let reloads = 0; ; reloads++) {
      const result = await attempt(current, admitted);
      const refusedEarly = result.kind === 'invalid_input' || result.kind === 'rate_limited';
      if (result.kind !== 'principal_changed' && !refusedEarly) return result as O;
      if (reloads >= MAX_PRINCIPAL_RELOADS) throw new Error(`the principal of token ${current.tokenId} changed during ${reloads + 1} searches in a row`);
      const fresh = await this.options.principals.reload(current);
      if (fresh === null) return { kind: 'unauthenticated' };
      if (!canSearch(fresh)) return { kind: 'subscription_required' };
      if (refusedEarly && sameSubscription(current.subscription, fresh.subscription)) return result;
      if (result.kind === 'principal_changed') admitted = (result as PrincipalChanged).admitted;
      current = fresh;
    }
  }

  /**
   * The rest of a search, in the contract's order, whatever it asked for: Idempotency-Key, rate,
   * lookup, and the commit that counts it against the quota (a sandbox token's: records it
   * uncounted). Each step is a method below; this is the hot path, so the steps return the
   * storage's promises as they are and every await stays here, as many as a search needs.
   */
  private async run(principal: SearchPrincipal, subject: Subject, rawIdempotencyKey: string | undefined, admitted: RateDecision | null, pace?: SearchPace): Promise<Attempt> {
    const idempotencyKey = validIdempotencyKey(rawIdempotencyKey);
    if (idempotencyKey === INVALID) return invalidIdempotencyKey();

    const { sandbox } = principal;
    const now = this.now();
    const allowance = this.allowanceOf(principal, now);
    const rate = admitted ?? (await this.consumeRate(principal, pace?.rateLimit ?? allowance.ratePerSecond));
    const period = billingPeriodAt(allowance.periodAnchor, now);
    const periodStart = period.start.toISOString();
    if (!rate.allowed) return { kind: 'rate_limited', limits: limitsOf(rate, allowance, period, now, await this.usedInPeriod(principal, periodStart)) };

    let vin: string | null;
    if (subject.kind === 'vin') vin = subject.vin;
    else if (sandbox) vin = sandboxVinOfLot(subject.lot.auction, subject.lot.lotId);
    else vin = await this.lookupVinOfLot(subject.lot);
    let found: FoundLots = { lots: [], named: null };
    if (vin !== null && sandbox) found = { lots: sandboxLots(vin).map(lotJson), named: null };
    else if (vin !== null) found = await this.lookupLots(vin);

    const result = await this.resolvedReplay(await this.commit(principal, subject, vin, found, idempotencyKey, now, periodStart, allowance, pace?.batchItem));
    if (result.kind === 'principal_changed') return { kind: 'principal_changed', admitted: rate };
    this.touchToken(principal, now);
    return this.outcomeOf(result, subject, sandbox, rate, allowance, period, now);
  }

  /**
   * A counted call that stores no report, in the contract's order like a search: (its input was
   * checked by the caller) the Idempotency-Key, the per-second rate, the call's own work
   * (`answer`), then one commit that re-checks the principal, counts the call against the monthly
   * quota and writes its search record (of the call's kind) and its key. `answer` is given the
   * principal it runs for: a sandbox token's call is recorded uncounted, and the caller decides
   * what a sandbox token reads.
   */
  runCounted<T>(
    principal: SearchPrincipal,
    call: CountedCall,
    rawIdempotencyKey: string | undefined,
    answer: (principal: SearchPrincipal) => Promise<CountedAnswer<T>>,
  ): Promise<CountedOutcome<T>> {
    return this.runFor(principal, (current, admitted) => this.runCall(current, call, rawIdempotencyKey, admitted, answer));
  }

  /**
   * A counted call about one lot (a lot's history): the auction and lot id checked as the lookup
   * by lot checks them (422 with errors.auction or errors.lot_id, in the contract's order), then
   * runCounted's steps with `answer` given the lot.
   */
  runCountedOnLot<T>(
    principal: SearchPrincipal,
    kind: CountedCall['kind'],
    raw: { auction: string; lotId: string },
    rawIdempotencyKey: string | undefined,
    answer: (principal: SearchPrincipal, lot: LotRef) => Promise<CountedAnswer<T>>,
  ): Promise<CountedOutcome<T>> {
    return this.runFor(principal, async (current, admitted): Promise<CountedOutcome<T> | PrincipalChanged> => {
      const auctionCheck = checkAuction(raw.auction, current.sandbox ? SANDBOX_AUCTIONS : await this.knownAuctions(raw.auction));
      if (!auctionCheck.ok) return { kind: 'invalid_input', field: 'auction', messages: auctionCheck.errors };
      const lotIdCheck = checkLotId(raw.lotId);
      if (!lotIdCheck.ok) return { kind: 'invalid_input', field: 'lot_id', messages: lotIdCheck.errors };
      const lot: LotRef = { auction: auctionCheck.auction, lotId: lotIdCheck.lotId };
      const call: CountedCall = { kind, query: `${lot.auction}/${lot.lotId}` };
      return this.runCall(current, call, rawIdempotencyKey, admitted, (p) => answer(p, lot));
    });
  }

  private async runCall<T>(
    principal: SearchPrincipal,
    call: CountedCall,
    rawIdempotencyKey: string | undefined,
    admitted: RateDecision | null,
    answer: (principal: SearchPrincipal) => Promise<CountedAnswer<T>>,
  ): Promise<CountedOutcome<T> | PrincipalChanged> {
    const idempotencyKey = validIdempotencyKey(rawIdempotencyKey);
    if (idempotencyKey === INVALID) return invalidIdempotencyKey();

    const now = this.now();
    const allowance = this.allowanceOf(principal, now);
    const rate = admitted ?? (await this.consumeRate(principal, allowance.ratePerSecond));
    const period = billingPeriodAt(allowance.periodAnchor, now);
    const periodStart = period.start.toISOString();
    if (!rate.allowed) return { kind: 'rate_limited', limits: limitsOf(rate, allowance, period, now, await this.usedInPeriod(principal, periodStart)) };

    const answered = await answer(principal);
    const subject = `${call.kind}?${call.query}`;
    const result = await this.options.repos.searchCommit.commit({
      principal,
      accountId: principal.accountId,
      tokenId: principal.tokenId,
      vin: subject,
      subject,
      kind: call.kind,
      found: answered.kind === 'found',
      now,
      periodStart,
      quota: allowance.monthlyQuota,
      lots: [],
      idempotencyKey,
      sandbox: principal.sandbox,
    });
    if (result.kind === 'principal_changed') return { kind: 'principal_changed', admitted: rate };
    if (result.kind === 'item_done') throw new Error('a counted call is no batch item, yet its commit answered item_done');
    this.touchToken(principal, now);
    if (result.kind === 'idempotency_conflict') return { kind: 'idempotency_conflict', original: describeSubject(result.originalVin) };
    const limits = limitsOf(rate, allowance, period, now, result.used);
    if (result.kind === 'quota_exceeded') {
      this.options.metrics.quotaRejections.inc();
      return { kind: 'quota_exceeded', limits };
    }
    const replayed = result.kind === 'replayed';
    if (!principal.sandbox) this.counted[replayed ? 'replayed' : answered.kind].inc();
    if (answered.kind === 'found') return { kind: 'found', body: answered.body, replayed, limits };
    return { kind: 'not_found', message: answered.message, replayed, limits };
  }

  /** Rate: one request in the account's per-second window. A sandbox token has a window of its own: testing a client never slows the account's live traffic. */
  private consumeRate(principal: SearchPrincipal, limit: number): Promise<RateDecision> {
    return this.options.rateLimiter.consume(principal.sandbox ? `${principal.accountId}:sandbox` : principal.accountId, limit);
  }

  /** The quota used so far, for the headers of a refusal that counts nothing. */
  private usedInPeriod(principal: SearchPrincipal, periodStart: string): Promise<number> {
    return this.options.repos.usageCounters.usedInPeriod(principal.accountId, periodStart);
  }

  /** Lookup by lot: the VIN of a stored lot, or null when the lot is not known. */
  private lookupVinOfLot(lot: LotRef): Promise<string | null> {
    return this.options.repos.lots.vinOfLotId(lot.auction, lot.lotId);
  }

  /** Lookup: a VIN's stored lots, as JSON text, and as the versions its report names. With the archive off it takes no step for photos. */
  private lookupLots(vin: string): Promise<FoundLots> {
    const { repos, resolveImages } = this.options;
    return resolveImages ? this.lookupLotsWithArchive(vin, resolveImages) : repos.lots.findJsonByVin(vin);
  }

  /**
   * With the photo archive on, archived photos are listed by their copies (docs/media.md): only
   * then are the lots parsed. A report whose photos the archive rewrote copies its lots: the
   * versions know the stored URLs, not which copy was archived when.
   */
  private async lookupLotsWithArchive(vin: string, resolveImages: (lots: Lot[]) => Promise<Lot[]>): Promise<FoundLots> {
    const found = await this.options.repos.lots.findJsonByVin(vin);
    if (found.lots.length === 0) return found;
    const lots = (await resolveImages(found.lots.map((text) => JSON.parse(text) as Lot))).map(lotJson);
    return { lots, named: lots.every((lot, i) => lot === found.lots[i]) ? found.named : null };
  }

  /** A replay of a report whose snapshot names versions: its lots rebuilt (the commit reads the snapshot's text alone). */
  private async resolvedReplay(result: CommitResult): Promise<CommitResult> {
    if (result.kind !== 'replayed' || result.search.namedSnapshot === undefined) return result;
    const { namedSnapshot, ...search } = result.search;
    return { ...result, search: { ...search, lots: await this.options.repos.reports.lotsOfSnapshot(namedSnapshot) } };
  }

  /**
   * Quota and commit: the search record, the report, the count against the quota and the
   * Idempotency-Key, in one transaction that re-checks the principal first.
   */
  private commit(
    principal: SearchPrincipal,
    subject: Subject,
    vin: string | null,
    found: FoundLots,
    idempotencyKey: string | null,
    now: Date,
    periodStart: string,
    allowance: Allowance,
    batchItem: SearchPace['batchItem'],
  ): Promise<CommitResult> {
    const asked = subject.kind === 'vin' ? subject.vin : lotSubject(subject.lot);
    const input: SearchToCommit = {
      principal,
      accountId: principal.accountId,
      tokenId: principal.tokenId,
      vin: vin ?? asked,
      subject: asked,
      now,
      periodStart,
      quota: allowance.monthlyQuota,
      lots: found.lots,
      named: found.named,
      idempotencyKey,
      sandbox: principal.sandbox,
      kind: subject.kind === 'vin' ? 'search' : 'lot',
    };
    // The words outcomeOf's not_found answers with (the item's message, item-result.ts). Set
    // after the literal rather than spread into it, which built every search's input through a copy.
    if (batchItem) {
      input.batchItem = { batchId: batchItem.batchId, index: batchItem.index, publicBaseUrl: this.options.publicBaseUrl, notFoundMessage: notFoundMessage(vin ?? asked, subject.kind === 'lot' ? subject.lot : null) };
    }
    return this.options.repos.searchCommit.commit(input);
  }

  /** The answer to a committed search, counted in the searches metric as the quota counts it. */
  private outcomeOf(
    result: Exclude<CommitResult, { kind: 'principal_changed' }>,
    subject: Subject,
    sandbox: boolean,
    rate: RateDecision,
    allowance: Allowance,
    period: BillingPeriod,
    now: Date,
  ): SearchOutcome | ItemDone {
    if (result.kind === 'item_done') return result;
    if (result.kind === 'idempotency_conflict') return { kind: 'idempotency_conflict', original: describeSubject(result.originalVin) };
    const limits = limitsOf(rate, allowance, period, now, result.used);
    if (result.kind === 'quota_exceeded') {
      this.options.metrics.quotaRejections.inc();
      return { kind: 'quota_exceeded', limits };
    }
    const replayed = result.kind === 'replayed';
    const { search } = result;
    // The metric counts what the quota counts: a sandbox search is not one of them.
    if (!sandbox) this.counted[replayed ? 'replayed' : search.reportId !== null ? 'found' : 'not_found'].inc();
    const lot = subject.kind === 'lot' ? subject.lot : null;
    if (search.reportId === null) return { kind: 'not_found', vin: search.vin, lot, replayed, limits };
    return {
      kind: 'found',
      replayed,
      limits,
      report: {
        status: 'success',
        vin: search.vin,
        origin_timestamp: search.createdAt,
        lots: search.lots,
        // The brand's address as the commit read it: a cached principal's may be a minute old.
        report_url: `${result.reportBaseUrl ?? this.options.publicBaseUrl}/report/${search.reportId}`,
      },
    };
  }

  /**
   * The rate and quota a search is held to, and where its billing periods start: the plan in
   * force; for a sandbox token of an account without one, the sandbox allowance over calendar
   * months (its searches are never counted, so the quota only fills the headers).
   */
  private allowanceOf(principal: SearchPrincipal, now: Date): Allowance {
    const { subscription } = principal;
    if (subscription !== null) {
      return { ratePerSecond: subscription.ratePerSecond, monthlyQuota: subscription.monthlyQuota, periodAnchor: new Date(subscription.startedAt) };
    }
    return { ...SANDBOX_ALLOWANCE, periodAnchor: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)) };
  }

  /**
   * The auctions the service holds lots from, kept a minute; a word not in the list re-reads it
   * (at most once a second), so a new auction's first import is found at once.
   */
  private async knownAuctions(asked: string): Promise<string[]> {
    const at = Date.now();
    const cached = this.auctions;
    const fresh = cached !== null && at - cached.readAt < AUCTIONS_TTL_MS;
    const recheck = cached !== null && !cached.list.includes(asked.trim().toLowerCase()) && at - cached.readAt >= AUCTIONS_RECHECK_MS;
    if (fresh && !recheck) return cached.list;
    const list = await this.options.repos.lots.auctions();
    this.auctions = { list, readAt: at };
    return list;
  }

  /** Idempotency keys answer for 24 hours; the hourly sweep drops the older ones. */
  deleteExpiredIdempotencyKeys(now = this.now()): Promise<number> {
    return this.options.repos.idempotencyKeys.deleteExpired(now);
  }

  /** last_used_at is for the customer's token list; minute precision is plenty and saves a write per search. */
  private touchToken(principal: SearchPrincipal, now: Date): void {
    if (principal.lastUsedAt !== null && now.getTime() - Date.parse(principal.lastUsedAt) < TOUCH_INTERVAL_MS) return;
    this.options.principals.touch(principal.tokenId, now).catch((error) => this.options.onBackgroundError?.(error));
  }
}

/** Validation of the Idempotency-Key header: the key trimmed, null without one, or INVALID. */
function validIdempotencyKey(raw: string | undefined): string | null | typeof INVALID {
  if (raw === undefined) return null;
  const key = raw.trim();
  return IDEMPOTENCY_KEY.test(key) ? key : INVALID;
}

function invalidIdempotencyKey(): Extract<SearchOutcome, { kind: 'invalid_input' }> {
  return {
    kind: 'invalid_input',
    field: 'Idempotency-Key',
    messages: ['The Idempotency-Key header must be 1 to 255 visible ASCII characters.'],
  };
}

/** The limits a search answers with: the rate decision, and the quota as the given use leaves it. */
function limitsOf(rate: RateDecision, allowance: Allowance, period: BillingPeriod, now: Date, used: number): LimitsSnapshot {
  return { rate, quota: { limit: allowance.monthlyQuota, used, periodStart: period.start, periodEnd: period.end }, now };
}

/** A counted call's subject: its kind and its canonical query (runCounted). VINs and lots never hold a `?`. */
const CALL_SUBJECT = /^([a-z]+)\?(.*)$/s;

/** A search's subject as a customer reads it: `VIN <vin>`, `lot <auction>/<id>`, or a call's kind and query. */
function describeSubject(subject: string): string {
  const call = CALL_SUBJECT.exec(subject);
  if (call !== null) return call[2] === '' ? `a ${call[1]} call without parameters` : `a ${call[1]} call with ${call[2]}`;
  return subject.includes('/') ? `lot ${subject}` : `VIN ${subject}`;
}
