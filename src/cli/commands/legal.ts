import { readFile, stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { LEGAL_DOCUMENTS, LEGAL_MAX_BYTES, LegalDocumentError, type LegalDocumentName } from '../../accounts/legal-documents.ts';
import { CliError } from '../cli-error.ts';
import { withDatabase } from '../database.ts';
import { formatTable } from '../table.ts';

const NAMES = Object.keys(LEGAL_DOCUMENTS) as LegalDocumentName[];

function documentName(value: string): LegalDocumentName {
  if (!(NAMES as string[]).includes(value)) throw new CliError(`unknown document "${value}": use one of ${NAMES.join(', ')}.`, 2);
  return value as LegalDocumentName;
}

/**
 * The operator's legal pages kept in the database, which every instance reads (docs/account.md,
 * docs/scale-out.md): a deployment of several instances sets them once here instead of copying
 * files to each instance's LEGAL_DIR.
 */
export function registerLegalCommands(program: Command): void {
  const legal = program.command('legal').description("the Terms of Service and Privacy Policy customers accept: kept in the database for every instance");

  legal
    .command('set')
    .description(`store a Markdown file as a legal document (${NAMES.join(' or ')}); it replaces the stored one and wins over LEGAL_DIR's file`)
    .argument('<document>', NAMES.join(' or '))
    .argument('<file>', 'a UTF-8 Markdown file')
    .action(async (name: string, file: string) => {
      const document = documentName(name);
      let bytes: Buffer;
      try {
        const info = await stat(file);
        if (!info.isFile()) throw new CliError(`${file} is not a file.`, 2);
        if (info.size > LEGAL_MAX_BYTES) throw new CliError(`${file} is ${info.size} bytes; a legal document may have at most ${LEGAL_MAX_BYTES}.`, 2);
        bytes = await readFile(file);
      } catch (error) {
        if (error instanceof CliError) throw error;
        throw new CliError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`, 2);
      }
      await withDatabase(async ({ services }) => {
        try {
          await services.legal.set(document, bytes);
        } catch (error) {
          if (error instanceof LegalDocumentError) throw new CliError(`${file}: ${error.message}.`, 2);
          throw error;
        }
      });
      process.stdout.write(`${LEGAL_DOCUMENTS[document].title} stored (${bytes.length} bytes): every instance serves it now.\n`);
    });

  legal
    .command('remove')
    .description("remove a stored legal document (LEGAL_DIR's file, if any, is served again)")
    .argument('<document>', NAMES.join(' or '))
    .action(async (name: string) => {
      const document = documentName(name);
      const removed = await withDatabase(({ services }) => services.legal.remove(document));
      if (!removed) throw new CliError(`no ${LEGAL_DOCUMENTS[document].title} is stored in the database.`, 1);
      process.stdout.write(`${LEGAL_DOCUMENTS[document].title} removed from the database.\n`);
    });

  legal
    .command('status')
    .description('where each legal document is served from: the database, a LEGAL_DIR file, the development placeholder, or nowhere')
    .option('--json', 'print it as JSON')
    .action(async (options: { json?: boolean }) => {
      const rows = await withDatabase(async ({ services }) =>
        Promise.all(
          NAMES.map(async (name) => {
            const document = await services.legal.read(name);
            return { document: name, source: document?.source ?? 'missing', updated_at: document?.updatedAt ?? null, bytes: document ? Buffer.byteLength(document.markdown) : null };
          }),
        ),
      );
      if (options.json) {
        process.stdout.write(`${JSON.stringify(rows)}\n`);
        return;
      }
      process.stdout.write(
        formatTable(
          [{ header: 'DOCUMENT' }, { header: 'SOURCE' }, { header: 'UPDATED' }, { header: 'BYTES', align: 'right' }],
          rows.map((row) => [row.document, row.source, row.updated_at ?? '', row.bytes === null ? '' : String(row.bytes)]),
        ),
      );
    });
}
