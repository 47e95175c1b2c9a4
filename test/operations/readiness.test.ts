import { describe, expect, test } from 'vitest';
import { Readiness, type ReadinessDependencies } from '../../src/operations/readiness.ts';

/** Dependencies that all pass; each test breaks one. */
function healthy(overrides: Partial<ReadinessDependencies> = {}): ReadinessDependencies & { probes: { pdf: number; media: number } } {
  const probes = { pdf: 0, media: 0 };
  return {
    probes,
    isProduction: true,
    mail: { transport: 'smtp', transportChosen: true },
    database: { ping: async () => 1 },
    pendingMigrations: async () => [],
    seller: { missing: async () => [] },
    legal: { missing: async () => [] },
    pdf: {
      probe: async () => {
        probes.pdf += 1;
        return null;
      },
    },
    media: {
      enabled: true,
      storeKind: 's3',
      probeStore: async () => {
        probes.media += 1;
        return null;
      },
    },
    ...overrides,
  };
}

describe('Readiness', () => {
  test('all well: ready, every check ok', async () => {
    const report = await new Readiness(healthy()).check();
    expect(report.ready).toBe(true);
    expect(report.checks.map((c) => [c.name, c.status])).toEqual([
      ['database', 'ok'],
      ['migrations', 'ok'],
      ['setup', 'ok'],
      ['mail', 'ok'],
      ['pdf-browser', 'ok'],
      ['media-store', 'ok'],
    ]);
  });

  test('production: mail with no transport (the outbox only as a fallback) fails; chosen explicitly it passes', async () => {
    const fallback = await new Readiness(healthy({ mail: { transport: 'outbox', transportChosen: false } })).check();
    expect(fallback.ready).toBe(false);
    expect(fallback.problems).toEqual([expect.stringMatching(/^mail has no transport: set SMTP_URL, or MAIL_TRANSPORT=outbox/)]);
    expect((await new Readiness(healthy({ mail: { transport: 'outbox', transportChosen: true } })).check()).ready).toBe(true);
  });

  test('outside production the outbox, a missing browser and missing setup are warnings', async () => {
    const report = await new Readiness(
      healthy({
        isProduction: false,
        mail: { transport: 'outbox', transportChosen: false },
        pdf: { probe: async () => 'no browser at PDF_BROWSER_PATH (/nope)' },
        seller: { missing: async () => ['SELLER_NAME is not set'] },
      }),
    ).check();
    expect(report.ready).toBe(true);
    expect(report.checks.filter((c) => c.status === 'warning').map((c) => c.name)).toEqual(['setup', 'mail', 'pdf-browser']);
  });

  test('each failing check is named in the problems', async () => {
    const cases: Array<[Partial<ReadinessDependencies>, RegExp]> = [
      [{ database: { ping: async () => Promise.reject(new Error('connect ECONNREFUSED')) } }, /^the database is unreachable: connect ECONNREFUSED$/],
      [{ pendingMigrations: async () => ['0014-next'] }, /^migrations are behind: 1 not run \(0014-next\); run vinhistory migrate$/],
      [{ pdf: { probe: async () => 'the PDF browser at PDF_BROWSER_PATH (/x) does not start: boom' } }, /does not start: boom/],
      [{ media: { enabled: true, storeKind: 's3', probeStore: async () => "the photo archive's s3 store cannot be written: AccessDenied" } }, /AccessDenied/],
      [{ seller: { missing: async () => ['SELLER_NAME is not set', 'SUPPORT_EMAIL is not set'] } }, /^SELLER_NAME is not set$/],
    ];
    for (const [broken, problem] of cases) {
      const report = await new Readiness(healthy(broken)).check();
      expect(report.ready).toBe(false);
      expect(report.problems[0]).toMatch(problem);
    }
  });

  test('the browser start and the store write are cached, a failure for less time; fresh skips the cache', async () => {
    let now = 0;
    let pdfProblem: string | null = null;
    const deps = healthy({ now: () => now });
    deps.pdf = {
      probe: async () => {
        deps.probes.pdf += 1;
        return pdfProblem;
      },
    };
    const readiness = new Readiness(deps);
    await Promise.all([readiness.check(), readiness.check()]);
    expect(deps.probes).toEqual({ pdf: 1, media: 1 });
    now = 59_000;
    await readiness.check();
    expect(deps.probes).toEqual({ pdf: 1, media: 1 });
    now = 61_000;
    await readiness.check();
    expect(deps.probes).toEqual({ pdf: 1, media: 2 });
    now = 5 * 60_000 + 1;
    pdfProblem = 'does not start';
    expect((await readiness.check()).ready).toBe(false);
    expect(deps.probes.pdf).toBe(2);
    pdfProblem = null;
    now += 20_000;
    expect((await readiness.check()).ready).toBe(false);
    now += 11_000;
    expect((await readiness.check()).ready).toBe(true);
    await readiness.check({ fresh: true });
    expect(deps.probes.pdf).toBe(4);
  });
});
