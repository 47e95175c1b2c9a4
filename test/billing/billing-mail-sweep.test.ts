import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { Account } from '../../src/domain/account.ts';
import type { Invoice } from '../../src/domain/invoice.ts';
import { billingPeriodAt } from '../../src/limits/billing-period.ts';
import { DIALECTS } from '../support/databases.ts';
import { principalAt, validVin } from '../support/fixtures.ts';
import { createAccountTestApp, randomEmail, type AccountTestApp } from '../support/customer-app.ts';
import { partsOf, subjectOf, TestSmtpServer, type ReceivedMail } from '../support/smtp-server.ts';

const DAY = 24 * 60 * 60 * 1000;
const T0 = new Date('2026-03-10T12:00:00.000Z');
const at = (days: number) => new Date(T0.getTime() + days * DAY);
const OPERATOR = 'billing@operator.example';

/** One received message, decoded: to whom, its subject, its text and HTML parts. */
function read(mail: ReceivedMail) {
  const { text, html } = partsOf(mail);
  return { to: mail.to, subject: subjectOf(mail), text: text ?? '', html: html ?? '' };
}

describe.each(DIALECTS)('billing mail, through the queue to an SMTP server (%s)', (dialect) => {
  let smtp: TestSmtpServer;
  let t: AccountTestApp;
  let clock = T0;

  beforeAll(async () => {
    smtp = await TestSmtpServer.start();
    t = await createAccountTestApp(dialect, { env: { SMTP_URL: smtp.url, OPERATOR_EMAIL: OPERATOR }, now: () => clock });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });
  afterEach(() => {
    smtp.received.length = 0;
  });

  /** Runs a sweep at `now` and sends what it queued; the messages received, decoded. */
  async function sweepAndSend(now: Date) {
    clock = now;
    const before = smtp.received.length;
    await t.app.services.billingMail.sweep(now);
    await t.app.services.mailDelivery.drain();
    return smtp.received.slice(before).map(read);
  }

  async function customer(language: Account['defaultLanguage'] = null): Promise<Account> {
    const account = await t.repos.accounts.create(randomEmail(), T0);
    if (language) await t.repos.accounts.setDefaultLanguage(account.id, language);
    return account;
  }

  async function invoiceFor(account: Account, now: Date): Promise<Invoice> {
    const result = await t.app.services.payments.billing.choose(account, 'standard', 'monthly', now, undefined, 'invoice');
    if (result.kind !== 'invoice') throw new Error(`expected an invoice, got ${result.kind}`);
    return result.invoice;
  }

  test('an invoice issued: the customer gets it with its page link and amount, the operator a copy; its payment: a receipt and the operator a copy; each once', async () => {
    const account = await customer();
    const invoice = await invoiceFor(account, T0);

    const issued = await sweepAndSend(at(0.01));
    expect(issued.map((mail) => mail.to).sort()).toEqual([account.email, OPERATOR].sort());
    const toCustomer = issued.find((mail) => mail.to === account.email)!;
    expect(toCustomer.subject).toBe(`Invoice ${invoice.reference}: $50.00`);
    const link = `https://vinhistory.test/account/billing/invoices/${invoice.id}`;
    expect(toCustomer.text).toContain(link);
    expect(toCustomer.text).toContain('Standard plan, billed monthly: $50.00');
    expect(toCustomer.text).toContain(`quoting the reference ${invoice.reference}`);
    // Pay by 14 days after issue.
    expect(toCustomer.text).toContain('March 24, 2026');
    expect(toCustomer.html).toContain(`<a href="${link}">`);
    expect(toCustomer.html).toContain('<html lang="en" dir="ltr">');
    const toOperator = issued.find((mail) => mail.to === OPERATOR)!;
    expect(toOperator.subject).toBe(`New invoice ${invoice.reference}: ${account.email}, $50.00`);
    expect(toOperator.text).toContain(`vinhistory invoices pay ${invoice.reference}`);

    // Nothing new: a second sweep sends nothing again.
    expect(await sweepAndSend(at(0.02))).toEqual([]);

    await t.app.services.invoices.pay(invoice.reference, at(1));
    const paid = await sweepAndSend(at(1.01));
    expect(paid.map((mail) => mail.to).sort()).toEqual([account.email, OPERATOR].sort());
    const receipt = paid.find((mail) => mail.to === account.email)!;
    expect(receipt.subject).toBe(`Payment received for invoice ${invoice.reference}`);
    expect(receipt.text).toContain(`we received $50.00 for invoice ${invoice.reference} (Standard plan, billed monthly) on March 11, 2026`);
    expect(receipt.text).toContain(link);
    expect(paid.find((mail) => mail.to === OPERATOR)!.subject).toBe(`Payment: ${account.email} paid ${invoice.reference}, $50.00`);
    expect(await sweepAndSend(at(1.02))).toEqual([]);
  });

  test('an invoice first seen already paid (a card charged at once, through Stripe): the receipt alone, no "please pay"', async () => {
    const account = await customer();
    const paid = await t.repos.invoices.create(
      { accountId: account.id, provider: 'stripe', kind: 'subscribe', planCode: 'vip', billing: 'annual', amountCents: 384000, currency: 'usd', description: 'VIP, annual', status: 'paid', paidAt: at(1.5).toISOString(), externalId: `in_${randomBytes(6).toString('hex')}` },
      at(1.5),
    );
    const mails = await sweepAndSend(at(1.6));
    expect(mails.map((mail) => [mail.to, mail.subject]).sort()).toEqual([
      [OPERATOR, `Payment: ${account.email} paid ${paid.reference}, $3,840.00`],
      [account.email, `Payment received for invoice ${paid.reference}`],
    ]);
    expect(mails.find((mail) => mail.to === account.email)!.text).toContain('(VIP plan, billed annually)');
    expect(mails.find((mail) => mail.to === OPERATOR)!.text).toContain('by card (Stripe)');
    expect(await sweepAndSend(at(1.7))).toEqual([]);
  });

  test("in the account's language where a catalogue exists (Spanish), else English; a deleted account gets nothing", async () => {
    const spanish = await customer('es');
    const georgian = await customer('ka');
    const gone = await customer();
    const invoice = await invoiceFor(spanish, at(2));
    await invoiceFor(georgian, at(2));
    await invoiceFor(gone, at(2));
    await t.repos.accounts.markDeleted(gone.id, at(2));

    const mails = (await sweepAndSend(at(2.01))).filter((mail) => mail.to !== OPERATOR);
    expect(mails.map((mail) => mail.to).sort()).toEqual([spanish.email, georgian.email].sort());
    const es = mails.find((mail) => mail.to === spanish.email)!;
    expect(es.subject).toBe(`Factura ${invoice.reference}: ${new Intl.NumberFormat('es', { style: 'currency', currency: 'USD' }).format(50)}`);
    expect(es.text).toContain('Hemos emitido la factura');
    expect(es.text).toContain('plan Standard, facturación mensual');
    expect(es.text).toContain('26 de marzo de 2026');
    expect(es.html).toContain('<html lang="es" dir="ltr">');
    expect(mails.find((mail) => mail.to === georgian.email)!.subject).toMatch(/^Invoice VH-/);
  });

  test('the quota warnings at 80% and 100%: once each per period, also when sweeps run side by side; again in the next period', async () => {
    const code = `q${randomBytes(3).toString('hex')}`;
    await t.repos.plans.create({ code, name: 'Tiny', monthlyQuota: 5, ratePerSecond: 5, monthlyPriceCents: 100 }, T0);
    const arranged = await t.app.services.payments.billing.arrangeNewAccount({ email: randomEmail(), planCode: code, billing: 'monthly' }, at(3));
    if (arranged.kind !== 'created') throw new Error(arranged.kind);
    const account = arranged.account;
    await t.repos.accounts.setDefaultLanguage(account.id, 'pl');
    const token = (await t.repos.tokens.create(account.id, 'x')).row;
    const count = async (searches: number, now: Date) => {
      const start = billingPeriodAt(new Date(arranged.subscription.startedAt), now).start.toISOString();
      await Promise.all(
        Array.from({ length: searches }, async () =>
          t.repos.searchCommit.commit({ principal: await principalAt(t.repos, token.id, now), accountId: account.id, tokenId: token.id, vin: validVin(), now, periodStart: start, quota: 5, lots: [], idempotencyKey: null }),
        ),
      );
    };

    await count(3, at(3.1));
    expect((await sweepAndSend(at(3.2))).filter((mail) => mail.to === account.email)).toEqual([]);
    await count(1, at(3.3));
    // Three sweeps at once, as three instances would: one warning.
    clock = at(3.4);
    await Promise.all([t.app.services.billingMail.sweep(at(3.4)), t.app.services.billingMail.sweep(at(3.4)), t.app.services.billingMail.sweep(at(3.4))]);
    await t.app.services.mailDelivery.drain();
    const near = smtp.received.map(read).filter((mail) => mail.to === account.email);
    expect(near).toHaveLength(1);
    expect(near[0]!.to).toBe(account.email);
    expect(near[0]!.subject).toBe('Wykorzystano 80% wyszukiwań w tym miesiącu');
    expect(near[0]!.text).toContain('Wykorzystano 4 z 5 wyszukiwań planu Tiny');
    expect(near[0]!.text).toContain('https://vinhistory.test/account/billing');
    const mine = (mails: ReturnType<typeof read>[]) => mails.filter((mail) => mail.to === account.email);
    expect(mine(await sweepAndSend(at(3.5)))).toEqual([]);

    await count(3, at(3.6));
    const full = mine(await sweepAndSend(at(3.7)));
    expect(full.map((mail) => mail.subject)).toEqual(['Wykorzystano wszystkie wyszukiwania w tym miesiącu']);
    expect(full[0]!.text).toContain('Wykorzystano wszystkie 5 wyszukiwań planu Tiny');
    // The count starts again a month after the subscription's start.
    expect(full[0]!.text).toContain('13 kwietnia 2026');
    expect(mine(await sweepAndSend(at(3.8)))).toEqual([]);

    // Straight past both thresholds in the next period: the 100% warning alone.
    await count(5, at(34));
    const next = mine(await sweepAndSend(at(34.1)));
    expect(next.map((mail) => mail.subject)).toEqual(['Wykorzystano wszystkie wyszukiwania w tym miesiącu']);
  });

  test('a plan ending: a notice 7 days before its end, and one when it has ended; none when another plan took over', async () => {
    const arranged = await t.app.services.payments.billing.arrangeNewAccount({ email: randomEmail(), planCode: 'professional', billing: 'monthly' }, at(40));
    if (arranged.kind !== 'created') throw new Error(arranged.kind);
    const { account, subscription } = arranged;
    await t.repos.subscriptions.setEndsAt(subscription.id, at(50));

    expect((await sweepAndSend(at(42))).filter((mail) => mail.to === account.email)).toEqual([]);
    const ending = (await sweepAndSend(at(43.5))).filter((mail) => mail.to === account.email);
    expect(ending.map((mail) => mail.subject)).toEqual(['Your Professional plan ends on April 29, 2026']);
    expect(ending[0]!.text).toContain('refused (402)');
    expect(ending[0]!.text).toContain('https://vinhistory.test/account/billing');
    expect((await sweepAndSend(at(44))).filter((mail) => mail.to === account.email)).toEqual([]);

    const ended = (await sweepAndSend(at(50.1))).filter((mail) => mail.to === account.email);
    expect(ended.map((mail) => mail.subject)).toEqual(['Your Professional plan has ended']);
    expect(ended[0]!.text).toContain('ended on April 29, 2026');
    expect((await sweepAndSend(at(50.2))).filter((mail) => mail.to === account.email)).toEqual([]);

    // Ended, and a new plan already in force: nothing to tell.
    const renewed = await t.app.services.payments.billing.arrangeNewAccount({ email: randomEmail(), planCode: 'standard', billing: 'monthly' }, at(40));
    if (renewed.kind !== 'created') throw new Error(renewed.kind);
    await t.repos.subscriptions.setEndsAt(renewed.subscription.id, at(51));
    await t.repos.subscriptions.create({ accountId: renewed.account.id, planCode: 'vip', billing: 'monthly', startedAt: at(51) }, at(51));
    const after = (await sweepAndSend(at(51.5))).filter((mail) => mail.to === renewed.account.email);
    expect(after).toEqual([]);
  });
});
