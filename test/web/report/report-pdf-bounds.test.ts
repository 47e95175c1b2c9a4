import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORT_LANGUAGES } from '../../../src/domain/report-language.ts';
import { createTestApp, testConfig, type TestApp } from '../../support/app.ts';
import { createCustomer, makeLot, validVin } from '../../support/fixtures.ts';

/**
 * Issue 28, F4: uncached PDF variants of a free report were all queued and printed, however many
 * came. On the production configuration (its default queue and guard), with the lot's photos held
 * by a server that does not answer, every print stays in flight: what is let in shows as held.
 */
describe('report PDF print bounds (production configuration)', () => {
  let t: TestApp;
  let dataDir: string;
  let photos: Server;
  const held: ServerResponse[] = [];
  let closing = false;
  let reportPath: string;

  beforeAll(async () => {
    photos = createServer((_request, response) => {
      // Once the test is done, a queued print that starts then must fail its photo at once, not wait
      // out its 60 s budget in t.close() (seen once in a suite run: the hook timed out).
      if (closing) response.destroy();
      else held.push(response);
    });
    await new Promise<void>((resolve) => photos.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(photos.address() as AddressInfo).port}`;
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-pdf-bounds-'));
    t = await createTestApp('sqlite', {
      config: testConfig({
        NODE_ENV: 'production',
        DATA_DIR: dataDir,
        // The photo server is on loopback; the photos' wait is long enough to hold every print for the test.
        OUTBOUND_ALLOW_PRIVATE: 'true',
        PDF_PHOTO_BUDGET_MS: '60000',
        // No browser is needed: the prints never get past their photos while the test looks.
        PDF_BROWSER_PATH: path.join(dataDir, 'no-browser'),
      }),
    });
    expect(t.app.services.config.pdf).toMatchObject({ maxConcurrent: 2, queueMax: 8 });
    const customer = await createCustomer(t.repos, { rate: 1000 });
    const vin = validVin('1FTFW1ET5DFC7777');
    await t.repos.lots.upsertBatch([makeLot({ vin, auction: 'copart', lot_id: 41000001, images: [`${base}/1.jpg`] })]);
    const search = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    expect(search.statusCode).toBe(200);
    reportPath = new URL(search.json().report_url as string).pathname;
    // The report is signed at its first need: signed before the test, every request below reads the
    // kept signature in turn and reaches the PDF cache in the order it was sent.
    expect((await t.app.inject({ url: `${reportPath}.json` })).statusCode).toBe(200);
  });
  afterAll(async () => {
    closing = true;
    for (const response of held) response.destroy();
    await t?.close();
    await new Promise((resolve) => photos?.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The report's 16 PDFs: every language on both papers. */
  const variants = () => REPORT_LANGUAGES.flatMap((lang) => (['a4', 'letter'] as const).map((paper) => `${reportPath}.pdf?lang=${lang}&paper=${paper}`));
  const ask = (url: string, address: string) => t.app.inject({ url, remoteAddress: address });
  /**
   * The answers that have come once `expected` have (or 10 s passed), and a moment more for any
   * beyond them: the prints let in stay held by their photos and never answer while the test looks.
   * `pending` lists the requests (by index) still unanswered then: the prints let in.
   */
  async function settled(requests: Promise<{ statusCode: number }>[], expected: number): Promise<{ answers: number[]; pending: number[] }> {
    const answers: number[] = [];
    const answered = new Set<number>();
    requests.forEach((request, i) => void request.then((res) => { answers.push(res.statusCode); answered.add(i); }));
    const deadline = Date.now() + 10_000;
    while (answers.length < expected && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 300));
    return { answers, pending: requests.map((_, i) => i).filter((i) => !answered.has(i)) };
  }
  /** The variants whose prints the first test let in: the second counts the places they hold. */
  let printing: string[] = [];

  it('lets one reader start at most two new prints a second (429 with Retry-After for the rest)', async () => {
    const requests = variants().slice(0, 5).map((url) => ask(url, '203.0.113.7'));
    const { answers, pending } = await settled(requests, 3);
    expect(answers).toEqual([429, 429, 429]);
    // Which two got in depends on the order the five reach the PDF cache, not the order they were sent.
    expect(pending).toHaveLength(2);
    printing = pending.map((i) => variants()[i]!);
    const refused = await requests[[0, 1, 2, 3, 4].find((i) => !pending.includes(i))!]!;
    expect(refused.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(refused.headers['content-type']).toMatch(/^text\/html/);
    expect(refused.body).toContain('Too many PDFs asked for at once');
    // The same variant asked for again joins the print under way: neither refused nor printed twice.
    const joined = await settled([ask(printing[0]!, '203.0.113.7')], 0);
    expect(joined.answers).toEqual([]);
  });

  it('queues at most PDF_MAX_CONCURRENT + PDF_QUEUE_MAX prints; past them 503 with Retry-After, at once', async () => {
    // Two are in flight from the test before; 14 readers from 14 addresses ask for the other variants.
    expect(printing).toHaveLength(2);
    const requests = variants().filter((url) => !printing.includes(url)).map((url, i) => ask(url, `198.51.100.${i + 1}`));
    const { answers, pending } = await settled(requests, 6);
    // 2 + 8 places: 8 of the 14 print, 6 are refused at once.
    expect(answers).toEqual([503, 503, 503, 503, 503, 503]);
    expect(pending).toHaveLength(8);
    const refused = await requests[requests.findIndex((_, i) => !pending.includes(i))]!;
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.body).toContain('Too many PDFs are being printed right now');
  });
});
