import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Printed report PDFs on disk under DATA_DIR: a report never changes, so a PDF printed once (per
 * language, paper and brand) is served from here ever after. Written to a temporary name and
 * renamed, so that a reader never gets half a file; concurrent requests for one PDF print it once.
 */
export class PdfCache {
  private readonly inFlight = new Map<string, Promise<Buffer>>();

  constructor(private readonly dir: string) {}

  /** The file of a PDF: report ids are UUIDs and the rest is hashed, so no name reaches the path unchecked. */
  fileOf(key: PdfKey): string {
    const variant = createHash('sha256').update(`${key.language}\n${key.paper}\n${key.brand}`).digest('hex').slice(0, 16);
    return path.join(this.dir, key.reportId.slice(0, 2), `${key.reportId}-${key.language}-${key.paper}-${variant}.pdf`);
  }

  async read(key: PdfKey): Promise<Buffer | null> {
    try {
      return await readFile(this.fileOf(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /** The cached PDF, or the one `print` makes (once, however many ask at the same moment), stored for next time. */
  async getOrPrint(key: PdfKey, print: () => Promise<Buffer>): Promise<{ pdf: Buffer; cached: boolean }> {
    const stored = await this.read(key);
    if (stored) return { pdf: stored, cached: true };
    const file = this.fileOf(key);
    let pending = this.inFlight.get(file);
    if (!pending) {
      pending = (async () => {
        const pdf = await print();
        await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
        const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
        await writeFile(temporary, pdf, { mode: 0o600 });
        await rename(temporary, file);
        return pdf;
      })().finally(() => this.inFlight.delete(file));
      this.inFlight.set(file, pending);
    }
    return { pdf: await pending, cached: false };
  }
}

export interface PdfKey {
  reportId: string;
  language: string;
  paper: string;
  /** What the brand looks like (its settings, serialised): a changed brand prints anew. */
  brand: string;
}
