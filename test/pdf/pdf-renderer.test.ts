import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageFooterCss, PdfRenderer, type PdfStep } from '../../src/pdf/pdf-renderer.ts';
import { IN_CI } from '../support/env.ts';

const CHROMIUM = '/usr/bin/chromium';

describe('pageFooterCss', () => {
  it('turns {page} and {pages} into counters and escapes the rest as CSS strings', () => {
    const css = pageFooterCss('Brand "A" \\ </style> · Page {page} of {pages}', 'ltr', "'Noto Sans', sans-serif");
    expect(css).toBe(
      `@page{@bottom-center{content:"Brand \\22 A\\22  \\5c  \\3c /style\\3e  · Page " counter(page) " of " counter(pages);direction:ltr;unicode-bidi:plaintext;font-family:'Noto Sans', sans-serif;font-size:7.5pt;color:#566070}}`,
    );
    // Nothing in the text can close the rule or the <style> it sits in.
    expect(css.slice(css.indexOf('content:'), css.indexOf(';direction'))).not.toMatch(/[<>{}"]\s*[;}]|<\/style/);
  });

  it('writes a right-to-left footer for Arabic', () => {
    expect(pageFooterCss('صفحة {page} من {pages}', 'rtl', 'sans-serif')).toContain('content:"صفحة " counter(page) " من " counter(pages);direction:rtl');
  });
});

describe.runIf(existsSync(CHROMIUM) || IN_CI)('PdfRenderer', () => {
  let dir: string;
  let renderer: PdfRenderer;
  const steps: PdfStep[] = [];

  const text = (pdf: Buffer) => {
    const file = path.join(dir, `${Math.random().toString(36).slice(2)}.pdf`);
    writeFileSync(file, pdf);
    return execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
  };
  const doc = (body: string) => `<!doctype html><html><head><style>${pageFooterCss('Foot {page}/{pages}', 'ltr', 'sans-serif')}</style></head><body>${body}</body></html>`;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vinhistory-renderer-'));
    renderer = new PdfRenderer({ browserPath: CHROMIUM, maxConcurrent: 2, log: pino({ level: 'silent' }), onStep: (step) => steps.push(step) });
  });
  afterAll(async () => {
    await renderer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints one document after another on a kept page, each with only its own content and the footer', async () => {
    const first = text(await renderer.print(doc('<p>First document</p>'), { paper: 'a4' }));
    const second = text(await renderer.print(doc('<p>Second document</p>'), { paper: 'letter' }));
    expect(first).toContain('First document');
    expect(first).toContain('Foot 1/1');
    expect(second).toContain('Second document');
    expect(second).not.toContain('First document');
    expect(steps).toEqual(['page', 'content', 'print', 'page', 'content', 'print']);
  });

  it('prints at most maxConcurrent at once, each its own document', async () => {
    const texts = await Promise.all([1, 2, 3, 4].map(async (n) => text(await renderer.print(doc(`<p>Document ${n}</p>`), { paper: 'a4' }))));
    texts.forEach((t, i) => {
      expect(t).toContain(`Document ${i + 1}`);
      expect(t.match(/Document \d/g)).toHaveLength(1);
    });
  });

  it('starts a new browser when the one it had is gone, and its kept pages with it', async () => {
    const browser = await (renderer as unknown as { browser: Promise<Browser> }).browser;
    await browser.close();
    expect(text(await renderer.print(doc('<p>After a crash</p>'), { paper: 'a4' }))).toContain('After a crash');
    const next = await (renderer as unknown as { browser: Promise<Browser> }).browser;
    expect(next).not.toBe(browser);
  });

  it('refuses every network request a document makes, on a kept page too', async () => {
    let requests = 0;
    const server = createServer((_request, response) => {
      requests++;
      response.writeHead(200, { 'content-type': 'text/css' }).end('p{color:red}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (let i = 0; i < 2; i++) {
        const pdf = await renderer.print(doc(`<link rel="stylesheet" href="${base}/a.css"><p>Offline</p><img src="${base}/x.png" alt="photo">`), { paper: 'a4' });
        expect(text(pdf)).toContain('Offline');
      }
      expect(requests).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
