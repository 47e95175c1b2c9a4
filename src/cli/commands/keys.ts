import type { Command } from 'commander';
import { withDatabase } from '../database.ts';
import { cliActor } from '../operator.ts';
import { formatTable } from '../table.ts';

const when = (iso: string) => iso.slice(0, 19).replace('T', ' ');

/**
 * The keys that sign reports (docs/reports.md): list them, or rotate to a new one. A rotation keeps
 * every earlier key published in /.well-known/jwks.json, so the reports they signed still verify;
 * running servers sign with the new key within a minute.
 */
export function registerKeysCommands(program: Command): void {
  const keys = program.command('keys').description('the Ed25519 keys that sign reports: list, rotate');

  keys
    .command('list')
    .description('list the signing keys, newest (the one that signs) first')
    .option('--json', 'print the keys as JSON')
    .action(async (options: { json?: boolean }) => {
      const list = await withDatabase(({ services }) => services.signingKeys.list());
      if (options.json) {
        process.stdout.write(`${JSON.stringify(list.map((key) => ({ kid: key.kid, created_at: key.createdAt, current: key.current })))}\n`);
        return;
      }
      if (list.length === 0) {
        process.stdout.write('No signing key yet: the server makes one on its first start (or run `vinhistory keys rotate`).\n');
        return;
      }
      process.stdout.write(formatTable([{ header: 'KID' }, { header: 'CREATED (UTC)' }, { header: 'SIGNS' }], list.map((key) => [key.kid, when(key.createdAt), key.current ? 'yes (current)' : 'no (verifies earlier reports)'])));
    });

  keys
    .command('rotate')
    .description('make a new signing key the current one; earlier keys stay published and keep verifying what they signed')
    .option('--json', 'print the new key as JSON')
    .action(async (options: { json?: boolean }) => {
      const made = await withDatabase(async ({ services }) => {
        const key = await services.signingKeys.rotate();
        await services.operations.record(cliActor(), 'signing_key.rotate', key.kid, {});
        return key;
      });
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ kid: made.kid, created_at: made.createdAt, current: true })}\n`);
        return;
      }
      process.stdout.write(`New signing key ${made.kid}: reports not yet signed are signed with it (running servers take it within a minute). Earlier keys stay in /.well-known/jwks.json.\n`);
    });
}
