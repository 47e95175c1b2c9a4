import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LegalDocumentsRepository } from '../storage/repositories/legal-documents-repository.ts';

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
  /** Where it was read: the database (`vinhistory legal set`), a file of LEGAL_DIR, or the placeholder. */
  source: 'database' | 'file' | 'placeholder';
  updatedAt: string;
}

/** Why a document cannot be stored, said to the operator. */
export class LegalDocumentError extends Error {}

/** A legal page is text: a file larger than this is a mistake, refused rather than rendered. */
export const LEGAL_MAX_BYTES = 256 * 1024;

const PLACEHOLDER_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'legal-placeholders');

/**
 * The operator's terms and privacy policy, read on each request so that a change shows without a
 * restart, from the first place that has them:
 * 1. the database (`vinhistory legal set terms terms.md`): one copy every instance reads, the way
 *    for a deployment of several instances (docs/scale-out.md);
 * 2. LEGAL_DIR/terms.md, privacy.md: a file on this instance's disk, the single-instance way;
 * 3. outside production, the repository's placeholder, marked as one. In production a document
 *    found nowhere is missing (the page says so, and `serve` and /readyz report it).
 */
export class LegalDocuments {
  constructor(private readonly options: { dir: string; isProduction: boolean; store: LegalDocumentsRepository }) {}

  async read(name: LegalDocumentName): Promise<LegalDocument | null> {
    const { file, title } = LEGAL_DOCUMENTS[name];
    const stored = await this.options.store.find(name);
    if (stored) return { name, title, markdown: stored.markdown, placeholder: false, source: 'database', updatedAt: stored.updatedAt };
    const own = await readBounded(path.join(this.options.dir, file));
    if (own) return { name, title, markdown: own.text, placeholder: false, source: 'file', updatedAt: own.mtime };
    if (this.options.isProduction) return null;
    const fallback = await readBounded(path.join(PLACEHOLDER_DIR, file));
    return fallback ? { name, title, markdown: fallback.text, placeholder: true, source: 'placeholder', updatedAt: fallback.mtime } : null;
  }

  /** The documents the operator has not provided, as lines for `serve` and /readyz. */
  async missing(): Promise<string[]> {
    const problems: string[] = [];
    for (const [name, { file, title }] of Object.entries(LEGAL_DOCUMENTS) as [LegalDocumentName, (typeof LEGAL_DOCUMENTS)[LegalDocumentName]][]) {
      if (await this.options.store.find(name)) continue;
      const found = await readBounded(path.join(this.options.dir, file));
      if (!found) {
        problems.push(`no ${title} to accept at sign-up: set it with \`vinhistory legal set ${name} <file.md>\` (or put ${path.join(this.options.dir, file)} on this instance)`);
      }
    }
    return problems;
  }

  /**
   * Stores a document in the database, for every instance; it then wins over LEGAL_DIR's file.
   * Refused: an empty text, one over LEGAL_MAX_BYTES, or bytes that are not UTF-8.
   */
  async set(name: LegalDocumentName, bytes: Buffer, now = new Date()): Promise<void> {
    if (bytes.length > LEGAL_MAX_BYTES) throw new LegalDocumentError(`the file is ${bytes.length} bytes; a legal document may have at most ${LEGAL_MAX_BYTES}`);
    let markdown: string;
    try {
      markdown = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new LegalDocumentError('the file is not UTF-8 text');
    }
    if (markdown.trim() === '') throw new LegalDocumentError('the file is empty');
    await this.options.store.set(name, markdown, now);
  }

  /** Removes the database's copy (LEGAL_DIR's file, if any, shows again); false when there was none. */
  remove(name: LegalDocumentName): Promise<boolean> {
    return this.options.store.remove(name);
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
