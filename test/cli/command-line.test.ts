import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.ts';
import { reportError } from '../../src/cli/report-error.ts';

/**
 * The command-line grammar, parsed in-process by the real program: option validation needs no
 * database and no process, so these cases do not pay a CLI start-up each. A preAction hook stops
 * every command before its action, so nothing here can touch a database.
 */
async function parse(...args: string[]): Promise<{ code: number; stderr: string; options?: Record<string, unknown>; operands?: unknown[] }> {
  let stderr = '';
  const program = buildProgram({ output: { writeErr: (text) => (stderr += text), writeOut: () => {} } });
  let reached: { options: Record<string, unknown>; operands: unknown[] } | undefined;
  program.hook('preAction', (_root, command) => {
    reached = { options: command.opts(), operands: command.processedArgs };
    throw new Error('stopped before the action');
  });
  try {
    await program.parseAsync(args, { from: 'user' });
    return { code: 0, stderr };
  } catch (error) {
    if (reached) return { code: 0, stderr, ...reached };
    return { code: reportError(error), stderr };
  }
}

describe('vinhistory command line', () => {
  it('parses and normalises valid options', async () => {
    expect((await parse('plans', 'create', '--code', 'acme', '--name', ' Acme ', '--quota', '100000', '--rate', '+20', '--price-cents', '0')).options).toEqual({
      code: 'acme',
      name: 'Acme',
      quota: 100000,
      rate: 20,
      priceCents: 0,
    });
    expect((await parse('accounts', 'create', '--email', ' Buyer@Example.COM ', '--plan', 'vip')).options).toEqual({
      email: 'buyer@example.com',
      plan: 'vip',
      billing: 'monthly',
    });
    expect((await parse('tokens', 'create', '--email', 'a@b.co')).options).toEqual({ email: 'a@b.co', name: 'default' });
    expect(await parse('import', '--batch-size', '250', 'a.ndjson', 'b.ndjson.gz', '-')).toMatchObject({
      options: { batchSize: 250 },
      operands: [['a.ndjson', 'b.ndjson.gz', '-']],
    });
  });

  it.each([
    [['plans', 'create', '--code', 'x', '--name', 'X', '--quota', '0', '--rate', '1', '--price-cents', '1'], "option '--quota <n>' argument '0' is invalid. Expected a positive whole number."],
    [['plans', 'create', '--code', 'x', '--name', 'X', '--quota', '1', '--rate', '2.5', '--price-cents', '1'], "option '--rate <n>' argument '2.5' is invalid. Expected a positive whole number."],
    [['plans', 'create', '--code', 'x', '--name', 'X', '--quota', '1', '--rate', '1', '--price-cents', '-1'], "option '--price-cents <n>' argument '-1' is invalid. Expected a whole number, 0 or more."],
    [['plans', 'create', '--code', 'x', '--name', 'X', '--quota', '3000000000', '--rate', '1', '--price-cents', '1'], 'Expected a positive whole number, at most 2147483647.'],
    [['plans', 'create', '--code', 'Acme Corp', '--name', 'X', '--quota', '1', '--rate', '1', '--price-cents', '1'], "option '--code <code>' argument 'Acme Corp' is invalid. Expected a plan code"],
    [['plans', 'create', '--code', 'x', '--name', '  ', '--quota', '1', '--rate', '1', '--price-cents', '1'], 'Expected a name of 1 to 100 characters.'],
    [['plans', 'create', '--code', 'x', '--name', 'X', '--quota', '1', '--rate', '1'], "required option '--price-cents <n>' not specified"],
    [['accounts', 'create', '--email', 'not-an-email', '--plan', 'standard'], "argument 'not-an-email' is invalid. Expected an email address such as buyer@example.com."],
    [['accounts', 'create', '--email', 'a@b.co', '--plan', 'standard', '--billing', 'weekly'], "argument 'weekly' is invalid. Allowed choices are monthly, annual."],
    [['accounts', 'create', '--email', 'a@b.co'], "required option '--plan <code>' not specified"],
    [['subscriptions', 'change', '--email', 'a@b.co'], "required option '--plan <code>' not specified"],
    [['subscriptions', 'change', '--email', 'a@b.co', '--plan', 'vip', '--billing', 'weekly'], "argument 'weekly' is invalid. Allowed choices are monthly, annual."],
    [['accounts', 'list', '--status', 'frozen'], "argument 'frozen' is invalid. Allowed choices are active, lapsed, none, deleted."],
    [['accounts', 'list', '--limit', '0'], "option '--limit <n>' argument '0' is invalid. Expected a positive whole number."],
    [['subscriptions', 'cancel'], "required option '--email <email>' not specified"],
    [['import'], "missing required argument 'file'"],
    [['import', '--batch-size', '0', 'x.ndjson'], "option '--batch-size <n>' argument '0' is invalid. Expected a positive whole number."],
    [['plans', 'delete'], "unknown command 'delete'"],
  ])('refuses %j with exit 2', async (args, message) => {
    const result = await parse(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('(add --help for usage)');
  });
});
