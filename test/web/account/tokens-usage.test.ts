import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { TOKEN_ROTATION_GRACE_MS } from '../../../src/domain/api-token.ts';
import { usageChart } from '../../../src/web/account/usage-chart.ts';
import { DIALECTS } from '../../support/databases.ts';
import { validVin } from '../../support/fixtures.ts';
import { createAccountTestApp, randomEmail, WebClient, type AccountTestApp } from '../../support/customer-app.ts';

const TOKEN = /vh_live_[0-9A-Za-z]{32}/g;
const HOUR = 60 * 60 * 1000;

describe.each(DIALECTS)('tokens and usage pages (%s)', (dialect) => {
  let t: AccountTestApp;
  beforeAll(async () => {
    t = await createAccountTestApp(dialect);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function customer(quota?: number) {
    const browser = new WebClient(t.app);
    const email = randomEmail();
    await browser.signUp(email);
    const account = (await t.repos.accounts.findByEmail(email))!;
    let plan = 'standard';
    if (quota !== undefined) {
      plan = `quota-${Math.random().toString(36).slice(2, 10)}`;
      await t.repos.plans.create({ code: plan, name: 'Test', monthlyQuota: quota, ratePerSecond: 1000, monthlyPriceCents: 0 });
    }
    await t.repos.subscriptions.create({ accountId: account.id, planCode: plan, billing: 'monthly', startedAt: new Date(Date.now() - 60_000) });
    return { browser, account };
  }

  test('a new token is shown once, on the page the form redirects to (post/redirect/get), never cached; the list shows its prefix', async () => {
    const { browser, account } = await customer();
    await browser.get('/account/tokens');
    const posted = await browser.post('/account/tokens', { name: '  ci   pipeline ' });
    // The form answers a redirect: reloading the page that follows never sends it again.
    expect(posted.statusCode).toBe(303);
    expect(posted.headers.location).toBe('/account/tokens?done=created#created');
    expect(posted.body).not.toMatch(TOKEN);
    // The secret travels in an encrypted cookie, not readable in it, and never in the URL.
    const flash = posted.cookies.find((cookie) => cookie.name === 'vh_flash');
    expect(flash).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(flash!.value).not.toMatch(TOKEN);
    expect(Buffer.from(flash!.value, 'base64url').toString('latin1')).not.toMatch(/vh_live_/);
    const created = await browser.get('/account/tokens?done=created');
    expect(created.statusCode).toBe(200);
    expect(created.headers['cache-control']).toBe('no-store');
    const shown = [...new Set(created.body.match(TOKEN))];
    expect(shown).toHaveLength(1);
    const token = shown[0]!;
    const [row] = await t.repos.tokens.listForAccount(account.id);
    expect(row).toMatchObject({ name: 'ci pipeline', displayPrefix: token.slice(0, 12) });
    // The same curl line carries the new token, not a placeholder to replace.
    expect(created.body).not.toContain('YOUR_TOKEN');
    expect(created.body).toContain(`curl -H "Authorization: ${token}"`);
    // A reload of the same address shows the list and a notice, and makes no second token.
    const reloaded = await browser.get('/account/tokens?done=created');
    expect(reloaded.body).not.toMatch(TOKEN);
    expect(reloaded.body).toContain('Its secret was shown once');
    expect(await t.repos.tokens.listForAccount(account.id)).toHaveLength(1);
    // The flash opens only in the session that set it: another browser's cookie jar gets nothing.
    const other = new WebClient(t.app);
    await other.signUp(randomEmail());
    other.cookies.set('vh_flash', flash!.value);
    expect((await other.get('/account/tokens?done=created')).body).not.toMatch(TOKEN);
    const later = await browser.get('/account/tokens');
    expect(later.body).not.toMatch(TOKEN);
    expect(later.body).toContain(`${token.slice(0, 12)}…`);
    expect(later.body).toContain('ci pipeline');
    const search = await t.app.inject({ url: `/api/v1/search?vin=${validVin()}`, headers: { authorization: token } });
    expect(search.statusCode).toBe(404);
    // last_used_at is written after the answer, off the request's path.
    await vi.waitFor(async () => expect((await browser.get('/account/tokens')).body).not.toContain('<td data-label="Last used">Never</td>'));

    for (const name of ['', '   ', 'x'.repeat(101)]) {
      const refused = await browser.post('/account/tokens', { name });
      expect(refused.statusCode).toBe(422);
      expect(refused.body).toContain('Give the token a name');
    }
  });

  test('at most 25 live tokens per account', async () => {
    const { browser, account } = await customer();
    for (let i = 0; i < 25; i++) await t.repos.tokens.create(account.id, `t${i}`);
    await browser.get('/account/tokens');
    const refused = await browser.post('/account/tokens', { name: 'one too many' });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('25 live tokens');
  });

  test('rotation: a new token with the same name; the old one works for the grace period, then not; revocation is immediate', async () => {
    const { browser, account } = await customer();
    const { row, token: old } = await t.repos.tokens.create(account.id, 'deploy');
    await browser.get('/account/tokens');
    const before = Date.now();
    const redirected = await browser.post(`/account/tokens/${row.id}/rotate`);
    expect(redirected.statusCode).toBe(303);
    expect(redirected.headers.location).toBe('/account/tokens?done=rotated#created');
    const rotated = await browser.get('/account/tokens?done=rotated');
    const fresh = [...new Set(rotated.body.match(TOKEN))];
    expect(fresh).toHaveLength(1);
    expect(fresh[0]).not.toBe(old);
    expect(rotated.body).toContain('keeps working until');
    expect(rotated.body).toContain('24 hours');

    const stored = ((await t.repos.tokens.listForAccount(account.id)).find((token) => token.id === row.id))!;
    const expiresAt = Date.parse(stored.expiresAt!);
    expect(expiresAt).toBeGreaterThanOrEqual(before + TOKEN_ROTATION_GRACE_MS);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + TOKEN_ROTATION_GRACE_MS);
    const live = await t.repos.tokens.listForAccount(account.id);
    expect(live.map((token) => token.name)).toEqual(['deploy', 'deploy']);

    expect(await t.repos.tokens.authenticate(old, new Date(expiresAt - HOUR))).not.toBeNull();
    expect(await t.repos.tokens.authenticate(old, new Date(expiresAt))).toBeNull();
    expect(await t.repos.tokens.authenticate(fresh[0]!, new Date(expiresAt + 10 * HOUR))).not.toBeNull();
    // Once rotated, a token is not rotated again; its successor can be.
    expect((await browser.post(`/account/tokens/${row.id}/rotate`)).statusCode).toBe(409);

    const revoked = await browser.post(`/account/tokens/${row.id}/revoke`);
    expect(revoked.statusCode).toBe(303);
    // The notice names the token revoked.
    expect((await browser.get('/account/tokens?done=revoked')).body).toContain(`The token “deploy” (${old.slice(0, 12)}…) is revoked.`);
    expect((await t.app.inject({ url: `/api/v1/search?vin=${validVin()}`, headers: { authorization: old } })).statusCode).toBe(401);
    expect((await t.app.inject({ url: `/api/v1/search?vin=${validVin()}`, headers: { authorization: fresh[0]! } })).statusCode).toBe(404);
  });

  test('usage: this period’s use, a chart of searches per day, and the past searches paged newest first', async () => {
    const { browser, account } = await customer(100);
    const tokens = await t.repos.tokens.create(account.id, 'reporting');
    const vins: string[] = [];
    for (let i = 0; i < 30; i++) {
      const vin = validVin(`1FTEW1EP5JFA${String(10000 + i).slice(1)}`);
      vins.push(vin);
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: tokens.token }, payload: { vin } });
      expect(res.statusCode).toBe(404);
    }
    const page = await browser.get('/account/usage');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<span class="meter__used">30</span>');
    expect(page.body).toMatch(/<dt>Remaining<\/dt><dd>70<\/dd>/);
    expect(page.body).toContain('class="chart__bar chart__bar--today"');
    expect(page.body).toContain(': 30 searches</title>');
    const rowsOf = (html: string) => {
      const list = html.slice(html.indexOf('id="searches"'));
      return {
        vins: [...list.matchAll(/<span class="mono">([0-9A-Z]{17})<\/span>/g)].map((m) => m[1]!),
        times: [...list.matchAll(/<time datetime="([^"]+)">/g)].map((m) => m[1]!),
      };
    };
    const first = rowsOf(page.body);
    expect(first.vins).toHaveLength(25);
    const older = /href="(\/account\/usage\?before=[^"#]+)#searches"/.exec(page.body)![1]!.replace(/&amp;/g, '&');
    const second = await browser.get(older);
    const rest = rowsOf(second.body);
    expect(rest.vins).toHaveLength(5);
    // Every search once across the pages, newest first (searches in the same millisecond in id order).
    expect(new Set([...first.vins, ...rest.vins])).toEqual(new Set(vins));
    const times = [...first.times, ...rest.times];
    expect(times).toEqual([...times].sort().reverse());
    expect(second.body).not.toContain('Older searches →');
    // A made-up cursor is ignored, not an error.
    expect((await browser.get('/account/usage?before=garbage')).statusCode).toBe(200);
  });

  test('the chart covers every day of the period; days without searches are empty, later days are marked', () => {
    const start = new Date('2026-01-31T10:00:00.000Z');
    const end = new Date('2026-02-28T10:00:00.000Z');
    const chart = usageChart(start, end, [{ day: '2026-02-02', count: 40 }, { day: '2026-02-05', count: 3 }], new Date('2026-02-05T12:00:00.000Z'));
    expect(chart.bars).toHaveLength(29);
    expect(chart.max).toBe('50');
    expect(chart.bars[2]).toMatchObject({ count: 40, height: 80, y: 20, state: 'past', label: 'Feb 2: 40 searches' });
    expect(chart.bars[5]).toMatchObject({ count: 3, state: 'today' });
    expect(chart.bars[6]).toMatchObject({ count: 0, height: 0, state: 'future' });
    expect(chart.total).toBe('43');
    expect(chart.busiest).toEqual({ label: 'Feb 2', count: '40' });
    expect(chart.rows.map((row) => row.label)).toEqual(['Jan 31', 'Feb 1', 'Feb 2', 'Feb 3', 'Feb 4', 'Feb 5']);
    const empty = usageChart(start, end, [], new Date('2026-02-01T00:00:00.000Z'));
    expect(empty).toMatchObject({ max: '1', total: '0', busiest: null });
  });
});
