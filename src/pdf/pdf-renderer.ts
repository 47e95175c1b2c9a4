import { existsSync } from 'node:fs';
import type { FastifyBaseLogger } from 'fastify';
import type { Browser, Page } from 'playwright-core';

export type Paper = 'a4' | 'letter';

/** The browser that prints PDFs is not installed where PDF_BROWSER_PATH says: the PDF answers 503. */
export class PdfUnavailableError extends Error {
  constructor(readonly browserPath: string) {
    super(`No browser at ${browserPath} to print report PDFs (PDF_BROWSER_PATH); install Chromium (apt-get install chromium) or point the setting at Chrome.`);
    this.name = 'PdfUnavailableError';
  }
}

export interface PdfRendererOptions {
  browserPath: string;
  /** Documents printed at once; more wait their turn. */
  maxConcurrent: number;
  log: FastifyBaseLogger;
  /** Told how long each step of a print took (for the metrics and the benchmark's breakdown). */
  onStep?: (step: PdfStep, seconds: number) => void;
}

export interface PrintOptions {
  paper: Paper;
}

/** The steps of one PDF: the route adds `photos` and `html`, the renderer the rest. */
export type PdfStep = 'photos' | 'html' | 'page' | 'content' | 'print';

const LAUNCH_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-dev-shm-usage'];

/** A CSS string literal of any text: every character but letters, digits, spaces and plain punctuation escaped. */
function cssString(text: string): string {
  return `"${[...text].map((c) => (/[\p{L}\p{N} .,:;()\/·-]/u.test(c) && c !== '\\' ? c : `\\${c.codePointAt(0)!.toString(16)} `)).join('')}"`;
}

/**
 * The line of small print at the foot of every page, as a CSS page-margin box of the document
 * itself: it is drawn with the document's own fonts (Chromium's header and footer templates are
 * separate documents, which would need every font inlined again and parse them on every page).
 * `{page}` and `{pages}` in the text become the numbers.
 */
export function pageFooterCss(text: string, dir: 'ltr' | 'rtl', fontStack: string): string {
  const content = text
    .split(/(\{pages?\})/)
    .filter((part) => part !== '')
    .map((part) => (part === '{page}' ? 'counter(page)' : part === '{pages}' ? 'counter(pages)' : cssString(part)))
    .join(' ');
  return `@page{@bottom-center{content:${content};direction:${dir};unicode-bidi:plaintext;font-family:${fontStack};font-size:7.5pt;color:#566070}}`;
}

/**
 * The report's QR code at the foot of every page (docs/reports.md), as a page-margin box like the
 * footer's text: on the reading side's start, 15 mm square (it fits the 16 mm bottom margin and
 * reads at 150 dpi). The footer's text keeps its lines (a second line, under the first, carries the
 * digest of the signed payload), so that its first line keeps the width it had.
 */
export function pageQrCss(svg: string, dir: 'ltr' | 'rtl'): string {
  const start = dir === 'rtl' ? 'bottom-right' : 'bottom-left';
  return `@page{@${start}{content:url("data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}");width:15mm;height:15mm;vertical-align:middle}@bottom-center{white-space:pre-line}}`;
}

/**
 * Prints HTML to PDF with Chromium, through playwright-core: the same engine that lays out the page,
 * so the PDF shapes Arabic and Georgian as the page does. One browser for the process, started on
 * the first PDF and again if it dies; at most `maxConcurrent` documents at once. Each page, in a
 * context of its own with scripts off and every network request refused (photos and fonts arrive
 * inlined), is kept after its document for the next one: a new context and page cost more than
 * the rest of a print together (docs/benchmarks.md), and a document without scripts leaves nothing
 * behind that the next `setContent` does not replace.
 */
export class PdfRenderer {
  private browser: Promise<Browser> | null = null;
  /** Pages ready for a document, never more than `maxConcurrent`; emptied when the browser goes. */
  private idle: Page[] = [];
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private closed = false;

  constructor(private readonly options: PdfRendererOptions) {}

  /** Whether the configured browser is installed (checked on each call: an operator may install it later). */
  get available(): boolean {
    return existsSync(this.options.browserPath);
  }

  private async slot(): Promise<() => void> {
    if (this.running >= this.options.maxConcurrent) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    return () => {
      this.running--;
      this.waiting.shift()?.();
    };
  }

  /**
   * Whether the configured browser starts, for readiness (`/readyz`, `vinhistory doctor`): null when
   * it does, else why not. A running shared browser answers at once; otherwise a browser of its own
   * is started and closed, so that a check never leaves one running in a process that prints nothing.
   */
  async probe(options: { start: boolean; timeoutMs?: number } = { start: true }): Promise<string | null> {
    if (!this.available) return `no browser at PDF_BROWSER_PATH (${this.options.browserPath}): report PDFs answer 503`;
    if (!options.start) return null;
    const timeoutMs = options.timeoutMs ?? 20_000;
    const shared = this.browser ? await this.browser.catch(() => null) : null;
    if (shared?.isConnected()) return null;
    try {
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({ executablePath: this.options.browserPath, headless: true, args: LAUNCH_ARGS, timeout: timeoutMs });
      await browser.close();
      return null;
    } catch (error) {
      const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 300);
      return `the PDF browser at PDF_BROWSER_PATH (${this.options.browserPath}) does not start: ${reason}`;
    }
  }

  private launch(): Promise<Browser> {
    if (!this.browser) {
      // Loaded on the first PDF, not with the container: playwright-core takes longer to import
      // than the rest of the container together, and most processes (each CLI command) print none.
      const started = import('playwright-core').then(({ chromium }) =>
        chromium.launch({ executablePath: this.options.browserPath, headless: true, args: LAUNCH_ARGS }),
      );
      this.browser = started;
      started.then(
        (browser) =>
          browser.on('disconnected', () => {
            if (this.browser === started) this.browser = null;
            this.idle = this.idle.filter((page) => page.context().browser() !== browser);
          }),
        () => {
          if (this.browser === started) this.browser = null;
        },
      );
    }
    return this.browser;
  }

  private async takePage(): Promise<Page> {
    const browser = await this.launch();
    for (let page = this.idle.pop(); page; page = this.idle.pop()) {
      if (!page.isClosed() && browser.isConnected() && page.context().browser() === browser) return page;
    }
    const context = await browser.newContext({ javaScriptEnabled: false, offline: true });
    try {
      const page = await context.newPage();
      // Everything the document needs is inside it; a stray URL must not make the server fetch it.
      await page.route('**/*', (route) => route.abort());
      await page.emulateMedia({ media: 'print' });
      return page;
    } catch (error) {
      await context.close().catch(() => {});
      throw error;
    }
  }

  async print(html: string, options: PrintOptions): Promise<Buffer> {
    if (this.closed) throw new Error('The PDF renderer is closed');
    if (!this.available) throw new PdfUnavailableError(this.options.browserPath);
    const release = await this.slot();
    let started = performance.now();
    const step = (name: PdfStep) => {
      const now = performance.now();
      this.options.onStep?.(name, (now - started) / 1000);
      started = now;
    };
    let page: Page | null = null;
    try {
      page = await this.takePage();
      step('page');
      await page.setContent(html, { waitUntil: 'load', timeout: 20_000 });
      step('content');
      const pdf = await page.pdf({
        format: options.paper === 'letter' ? 'Letter' : 'A4',
        printBackground: true,
        margin: { top: '12mm', bottom: '16mm', left: '12mm', right: '12mm' },
      });
      step('print');
      if (!this.closed) this.idle.push(page);
      page = null;
      return pdf;
    } catch (error) {
      this.options.log.warn({ err: error }, 'report PDF failed to print');
      throw error;
    } finally {
      // A page whose print failed may be in any state: it goes, with its context.
      if (page) await page.context().close().catch(() => {});
      release();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.idle = [];
    const browser = this.browser;
    this.browser = null;
    if (browser) await (await browser.catch(() => null))?.close().catch(() => {});
  }
}
