import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASSETS_DIR, contentHash } from '../../src/web/assets.ts';
import { createTestApp, type TestApp } from '../support/app.ts';

const part = (file: string) => readFileSync(path.join(ASSETS_DIR, file), 'utf8');

describe('the stylesheet', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(async () => t?.close());

  it('is one sheet joined from the parts in cascade order, its hash in the link', async () => {
    const res = await t.app.inject({ url: '/assets/app.css' });
    expect(res.statusCode).toBe(200);
    const positions = ['base.css', 'layout.css', 'components.css', 'site.css', 'account.css', 'report.css'].map((file) => res.body.indexOf(part(file)));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(positions[0]).toBe(0);

    const page = (await t.app.inject({ url: '/report/not-a-uuid' })).body;
    expect(page).toContain(`<link rel="stylesheet" href="/assets/app.css?v=${contentHash(res.body)}">`);
  });

  it('is revalidated by its hash, as the static files are', async () => {
    const first = await t.app.inject({ url: '/assets/app.css' });
    expect(first.headers['cache-control']).toBe('public, max-age=0');
    const again = await t.app.inject({ url: '/assets/app.css', headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const head = await t.app.inject({ url: '/assets/app.css', method: 'HEAD' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toMatch(/^text\/css/);
  });

  it('is not served part by part', async () => {
    expect((await t.app.inject({ url: '/assets/base.css' })).statusCode).toBe(404);
    expect((await t.app.inject({ url: '/assets/account.js' })).statusCode).toBe(200);
  });
});
