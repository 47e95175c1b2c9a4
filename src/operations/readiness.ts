/**
 * Whether this instance is ready to take customers: what `/readyz`, `vinhistory doctor` and the
 * start of `serve` say. Each check answers ok, failed or warning; a warning is something that would
 * fail in production (the mail outbox, a missing PDF browser) and is only said outside it.
 */
export type CheckName = 'database' | 'migrations' | 'setup' | 'mail' | 'pdf-browser' | 'media-store';

export interface CheckResult {
  readonly name: CheckName;
  readonly status: 'ok' | 'failed' | 'warning';
  /** What was found, and for a failure what to do about it. */
  readonly detail: string;
}

export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: readonly CheckResult[];
  /** The failed checks' details, as /readyz lists them. */
  readonly problems: readonly string[];
}

export interface ReadinessDependencies {
  isProduction: boolean;
  mail: { transport: 'smtp' | 'outbox'; transportChosen: boolean };
  database: { ping(): Promise<unknown> };
  pendingMigrations(): Promise<string[]>;
  seller: { missing(): Promise<string[]> };
  legal: { missing(): Promise<string[]> };
  pdf: { probe(options: { start: boolean }): Promise<string | null> };
  media: { enabled: boolean; storeKind: string | null; probeStore(): Promise<string | null> };
  now?: () => number;
}

/**
 * How long a slow check's answer is reused: starting a browser costs a core for a second and a
 * store write a round trip, and a load balancer may poll every few seconds. A failure is kept
 * briefly, so that a fix shows soon.
 */
const CACHE_MS = { 'pdf-browser': { ok: 5 * 60_000, failed: 30_000 }, 'media-store': { ok: 60_000, failed: 15_000 } } as const;

type SlowCheck = keyof typeof CACHE_MS;

export class Readiness {
  private readonly cached = new Map<SlowCheck, { problem: string | null; at: number; running: Promise<string | null> | null }>();

  constructor(private readonly deps: ReadinessDependencies) {}

  /**
   * Every check. `fresh` (doctor, which runs once) skips the cache and always starts the PDF
   * browser; otherwise it is started only in production, and outside it only its presence is
   * checked: every development `serve` and test server would pay a browser start.
   */
  async check(options: { fresh?: boolean } = {}): Promise<ReadinessReport> {
    const { deps } = this;
    const production = deps.isProduction;
    // Outside production a check that only production needs reports as a warning, not a failure.
    const productionOnly = (problem: string | null): CheckResult['status'] => (problem === null ? 'ok' : production ? 'failed' : 'warning');

    const database = await deps.database.ping().then(
      () => null,
      (error: unknown) => `the database is unreachable: ${firstLine(error)}`,
    );
    // /readyz lists each missing setting on a line of its own, as `serve` always has.
    let setupLines: string[] = [];
    const checks: CheckResult[] = [{ name: 'database', status: database ? 'failed' : 'ok', detail: database ?? 'reachable' }];

    if (!database) {
      const pending = await deps.pendingMigrations().catch((error: unknown) => [`(cannot read: ${firstLine(error)})`]);
      checks.push(
        pending.length === 0
          ? { name: 'migrations', status: 'ok', detail: 'the schema is up to date' }
          : {
              name: 'migrations',
              status: 'failed',
              detail: `migrations are behind: ${pending.length} not run (${pending.slice(0, 5).join(', ')}${pending.length > 5 ? ', ...' : ''}); run vinhistory migrate`,
            },
      );
      const setup = await Promise.all([deps.seller.missing(), deps.legal.missing()]).then(
        (lists) => lists.flat(),
        (error: unknown) => [`the setup cannot be read: ${firstLine(error)}`],
      );
      setupLines = setup;
      checks.push({
        name: 'setup',
        status: productionOnly(setup.length ? setup.join('; ') : null),
        detail: setup.length ? setup.join('; ') : 'seller details, contact address and legal pages are set',
      });
    }

    const mailProblem =
      deps.mail.transport === 'outbox' && !deps.mail.transportChosen
        ? 'mail has no transport: set SMTP_URL, or MAIL_TRANSPORT=outbox to keep mail as files under DATA_DIR/outbox on purpose'
        : null;
    checks.push({
      name: 'mail',
      status: productionOnly(mailProblem),
      detail: mailProblem ?? (deps.mail.transport === 'smtp' ? 'sent by SMTP (SMTP_URL)' : 'written to the outbox (MAIL_TRANSPORT=outbox)'),
    });

    const [pdf, media] = await Promise.all([
      this.slow('pdf-browser', () => deps.pdf.probe({ start: production || options.fresh === true }), options.fresh),
      deps.media.enabled ? this.slow('media-store', () => deps.media.probeStore(), options.fresh) : Promise.resolve(null),
    ]);
    checks.push({ name: 'pdf-browser', status: productionOnly(pdf), detail: pdf ?? 'starts' });
    checks.push({
      name: 'media-store',
      // A store that cannot be written loses photos anywhere, so this one fails outside production too.
      status: media ? 'failed' : 'ok',
      detail: media ?? (deps.media.enabled ? `the ${deps.media.storeKind} store takes writes` : 'the photo archive is off'),
    });

    const problems = checks.filter((c) => c.status === 'failed').flatMap((c) => (c.name === 'setup' ? setupLines : [c.detail]));
    return { ready: problems.length === 0, checks, problems };
  }

  private slow(name: SlowCheck, run: () => Promise<string | null>, fresh = false): Promise<string | null> {
    const now = (this.deps.now ?? Date.now)();
    const entry = this.cached.get(name);
    if (entry?.running) return entry.running;
    if (!fresh && entry && now - entry.at < CACHE_MS[name][entry.problem === null ? 'ok' : 'failed']) return Promise.resolve(entry.problem);
    const running = run()
      .catch((error: unknown) => `${name}: ${firstLine(error)}`)
      .then((problem) => {
        this.cached.set(name, { problem, at: (this.deps.now ?? Date.now)(), running: null });
        return problem;
      });
    this.cached.set(name, { problem: entry?.problem ?? null, at: entry?.at ?? 0, running });
    return running;
  }
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 300);
}
