import { existsSync } from 'node:fs';
import type { FastifyBaseLogger } from 'fastify';
import { chromium, type Browser } from 'playwright-core';

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
}

export interface PrintOptions {
  paper: Paper;
  /** A line of small print at the foot of every page; `{page}` and `{pages}` become the numbers. */
  footer: string;
  /** Its direction, for a right-to-left footer. */
  dir: 'ltr' | 'rtl';
  /** @font-face rules for the footer, which the page's own fonts do not reach. */
  fontCss: string;
}

const LAUNCH_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-dev-shm-usage'];

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Prints HTML to PDF with Chromium, through playwright-core: the same engine that lays out the page,
 * so the PDF shapes Arabic and Georgian as the page does. One browser for the process, started on
 * the first PDF and again if it dies; a fresh context per document with scripts off and every
 * network request refused (photos and fonts arrive inlined), at most `maxConcurrent` at once.
 */
export class PdfRenderer {
  private browser: Promise<Browser> | null = null;
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

  private launch(): Promise<Browser> {
    if (!this.browser) {
      const started = chromium.launch({ executablePath: this.options.browserPath, headless: true, args: LAUNCH_ARGS });
      this.browser = started;
      started.then(
        (browser) =>
          browser.on('disconnected', () => {
            if (this.browser === started) this.browser = null;
          }),
        () => {
          if (this.browser === started) this.browser = null;
        },
      );
    }
    return this.browser;
  }

  async print(html: string, options: PrintOptions): Promise<Buffer> {
    if (this.closed) throw new Error('The PDF renderer is closed');
    if (!this.available) throw new PdfUnavailableError(this.options.browserPath);
    const release = await this.slot();
    try {
      const browser = await this.launch();
      const context = await browser.newContext({ javaScriptEnabled: false, offline: true });
      try {
        const page = await context.newPage();
        // Everything the document needs is inside it; a stray URL must not make the server fetch it.
        await page.route('**/*', (route) => route.abort());
        await page.setContent(html, { waitUntil: 'load', timeout: 20_000 });
        await page.emulateMedia({ media: 'print' });
        const footer = escapeHtml(options.footer)
          .replace('{page}', '<span class="pageNumber"></span>')
          .replace('{pages}', '<span class="totalPages"></span>');
        return await page.pdf({
          format: options.paper === 'letter' ? 'Letter' : 'A4',
          printBackground: true,
          displayHeaderFooter: true,
          headerTemplate: '<span></span>',
          footerTemplate: `<style>${options.fontCss}</style><div dir="${options.dir}" style="width:100%;margin:0 12mm;font-family:'Noto Sans','Noto Sans Georgian','Noto Sans Arabic',sans-serif;font-size:7.5pt;color:#566070;text-align:center">${footer}</div>`,
          margin: { top: '12mm', bottom: '16mm', left: '12mm', right: '12mm' },
        });
      } finally {
        await context.close().catch(() => {});
      }
    } catch (error) {
      if (error instanceof PdfUnavailableError) throw error;
      this.options.log.warn({ err: error }, 'report PDF failed to print');
      throw error;
    } finally {
      release();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const browser = this.browser;
    this.browser = null;
    if (browser) await (await browser.catch(() => null))?.close().catch(() => {});
  }
}
