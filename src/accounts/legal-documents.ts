import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The legal pages the operator provides, as Markdown files in LEGAL_DIR. */
export const LEGAL_DOCUMENTS = {
  terms: { file: 'terms.md', title: 'Terms of Service' },
  privacy: { file: 'privacy.md', title: 'Privacy Policy' },
} as const;

export type LegalDocumentName = keyof typeof LEGAL_DOCUMENTS;

export interface LegalDocument {
  name: LegalDocumentName;
  title: string;
  markdown: string;
  /** The repository's development placeholder, shown because the operator has provided none. */
  placeholder: boolean;
  updatedAt: string;
}

/** A legal page is text: a file larger than this is a mistake, refused rather than rendered. */
export const LEGAL_MAX_BYTES = 256 * 1024;

const PLACEHOLDER_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'legal-placeholders');

/**
 * Reads the operator's terms and privacy policy (LEGAL_DIR/terms.md, privacy.md) on each request,
 * so that an edit shows without a restart. Outside production a missing file falls back to the
 * repository's placeholder, marked as one; in production it is missing (the page says so, and
 * `serve` and /readyz report it).
 */
export class LegalDocuments {
  constructor(private readonly options: { dir: string; isProduction: boolean }) {}

  async read(name: LegalDocumentName): Promise<LegalDocument | null> {
    const { file, title } = LEGAL_DOCUMENTS[name];
    const own = await readBounded(path.join(this.options.dir, file));
    if (own) return { name, title, markdown: own.text, placeholder: false, updatedAt: own.mtime };
    if (this.options.isProduction) return null;
    const fallback = await readBounded(path.join(PLACEHOLDER_DIR, file));
    return fallback ? { name, title, markdown: fallback.text, placeholder: true, updatedAt: fallback.mtime } : null;
  }

  /** The documents the operator has not provided, as lines for `serve` and /readyz. */
  async missing(): Promise<string[]> {
    const problems: string[] = [];
    for (const { file, title } of Object.values(LEGAL_DOCUMENTS)) {
      const found = await readBounded(path.join(this.options.dir, file));
      if (!found) problems.push(`${path.join(this.options.dir, file)} is missing or unreadable: no ${title} to accept at sign-up`);
    }
    return problems;
  }
}

async function readBounded(file: string): Promise<{ text: string; mtime: string } | null> {
  try {
    const info = await stat(file);
    if (!info.isFile() || info.size > LEGAL_MAX_BYTES) return null;
    return { text: await readFile(file, 'utf8'), mtime: info.mtime.toISOString() };
  } catch {
    return null;
  }
}
