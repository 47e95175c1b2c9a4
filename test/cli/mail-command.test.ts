import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/storage/database.ts';
import { partsOf, subjectOf, TestSmtpServer, textOf } from '../support/smtp-server.ts';
import { freePort, makeDataDir, openCliDatabase, runCliInProcess, startServe, stopServer } from './run-cli.ts';

/**
 * Starts `vinhistory serve` and resolves once /healthz answers, or rejects with its output if it
 * dies. `started` gets the process at once, so that it is stopped even when the wait fails.
 */
async function serve(dataDir: string, env: Record<string, string>, started: (child: ChildProcess) => void): Promise<{ child: ChildProcess; baseUrl: string }> {
  const port = await freePort();
  const child = startServe(dataDir, { PORT: String(port), HOST: '127.0.0.1', ...env });
  started(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  // A start takes seconds on a quiet machine, and several times that on a loaded one.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}:\n${output}`);
    if (await fetch(`${baseUrl}/healthz`).then((response) => response.ok, () => false)) return { child, baseUrl };
    if (Date.now() > deadline) throw new Error(`serve did not answer within 60 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('vinhistory serve and vinhistory mail status', () => {
  const data = makeDataDir();
  let smtp: TestSmtpServer | undefined;
  let child: ChildProcess | undefined;
  afterAll(async () => {
    if (child) await stopServer(child);
    await smtp?.close();
    data.remove();
  });

  it('serve sends queued reset mail after answering, and billing mail from its sweep; stops cleanly on SIGTERM, and mail status shows the queue', { timeout: 150_000 }, async () => {
    const email = 'owner@example.com';
    const opened = await openCliDatabase(data.dir);
    await migrateToLatest(opened.db);
    const account = await opened.repos.accounts.create(email);
    // An invoice issued while no server ran: the sweep at serve's start announces it.
    const invoice = await opened.repos.invoices.create({ accountId: account.id, provider: 'manual', kind: 'subscribe', planCode: 'standard', billing: 'monthly', amountCents: 5000, currency: 'usd', description: 'Standard plan, monthly' });
    await opened.db.close();

    smtp = await TestSmtpServer.start();
    const server = await serve(data.dir, { SMTP_URL: smtp.url, NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://vinhistory.test', OPERATOR_EMAIL: 'ops@vinhistory.test' }, (started) => (child = started));
    const page = await fetch(`${server.baseUrl}/forgot-password`);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
    const cookie = page.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const answer = await fetch(`${server.baseUrl}/forgot-password`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, email }).toString(),
    });
    expect(answer.status).toBe(200);
    // The server's mail worker, woken by the queued message, sends it.
    await smtp.waitForMessages(3);
    const reset = smtp.received.find((mail) => subjectOf(mail) === 'Reset your vinhistory password')!;
    expect(reset.to).toBe(email);
    expect(textOf(reset)).toMatch(/https:\/\/vinhistory\.test\/reset-password\?token=[\w-]{43}/);
    const billing = smtp.received.filter((mail) => mail !== reset).map((mail) => [mail.to, subjectOf(mail)]);
    expect(billing.sort()).toEqual([
      ['ops@vinhistory.test', `New invoice ${invoice.reference}: ${email}, $50.00`],
      [email, `Invoice ${invoice.reference}: $50.00`],
    ]);
    expect(partsOf(smtp.received.find((mail) => mail.to === email && mail !== reset)!).text).toContain(`https://vinhistory.test/account/billing/invoices/${invoice.id}`);

    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGTERM');
    expect(await exited).toBe(0);

    // A message given up, as the operator would find it.
    const { db, repos } = await openCliDatabase(data.dir);
    try {
      await repos.mailQueue.enqueue({ kind: 'password_reset', recipient: 'gone@example.com', subject: 'Reset your vinhistory password', body: 'x' }, new Date());
      const [claimed] = await repos.mailQueue.claim(new Date(), 60_000, 1);
      await repos.mailQueue.giveUp(claimed!, new Date(), 'EAUTH: Invalid login: 535 Authentication failed');
    } finally {
      await db.close();
    }
    const status = await runCliInProcess(['mail', 'status'], { dataDir: data.dir });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^transport: the outbox folder/m);
    expect(status.stdout).toMatch(/^queued: +0$/m);
    expect(status.stdout).toMatch(/^sent: +3$/m);
    expect(status.stdout).toMatch(/^failed: +1 \(given up\)$/m);
    expect(status.stdout).toMatch(/^Failed:\nID +KIND +TO +ATTEMPTS +QUEUED +GIVEN UP +LAST ERROR\n/m);
    expect(status.stdout).toMatch(/mail_\w+ +password_reset +gone@example\.com +1 .*EAUTH: Invalid login/);

    const json = JSON.parse((await runCliInProcess(['mail', 'status', '--json'], { dataDir: data.dir, env: { SMTP_URL: smtp.url } })).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ queued: 0, sent: 3, failed: 1, transport: 'smtp', failed_messages: [{ to: 'gone@example.com', attempts: 1 }] });
    expect((await runCliInProcess(['mail', 'status', '--limit', '5000'], { dataDir: data.dir })).code).toBe(2);
  });
});
