import type { Command } from 'commander';
import type { CheckResult } from '../../operations/readiness.ts';
import { withDatabase } from '../database.ts';
import { formatTable } from '../table.ts';

/**
 * The checks of /readyz, run once from a shell with the server's environment: before a first
 * start, after an upgrade, or when /readyz says 503. Exit 1 when any check failed.
 */
export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('check what /readyz checks (database, migrations, setup, mail, PDF browser, photo store); exit 1 on any failure')
    .option('--json', 'print the checks as one JSON object')
    .action(async (options: { json?: boolean }) => {
      const report = await withDatabase(({ services }) => services.readiness.check({ fresh: true }), { migrate: false });
      process.stdout.write(options.json ? `${JSON.stringify(report)}\n` : formatChecks(report.checks, report.ready));
      if (!report.ready) process.exitCode = 1;
    });
}

function formatChecks(checks: readonly CheckResult[], ready: boolean): string {
  const table = formatTable(
    [{ header: 'check' }, { header: 'status' }, { header: 'detail' }],
    checks.map((check) => [check.name, check.status, check.detail]),
  );
  const failed = checks.filter((check) => check.status === 'failed').length;
  return `${table}\n${ready ? 'ready' : `not ready: ${failed} check${failed === 1 ? '' : 's'} failed`}\n`;
}
