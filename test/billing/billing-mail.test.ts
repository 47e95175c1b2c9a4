import { describe, expect, test } from 'vitest';
import { invoiceIssuedMail, mailLanguage, planEndMail } from '../../src/billing/billing-mail.ts';
import { BILLING_MAIL_CATALOGUES } from '../../src/billing/billing-mail-catalogue.ts';
import type { Invoice } from '../../src/domain/invoice.ts';

const links = { billing: 'https://vinhistory.test/account/billing', invoice: (id: string) => `https://vinhistory.test/account/billing/invoices/${id}` };
const slots = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

const invoice: Invoice = {
  id: 'inv_1',
  reference: 'VH-AAAA-BBBB',
  accountId: 'acct_1',
  provider: 'manual',
  kind: 'subscribe',
  planCode: 'custom',
  billing: 'annual',
  amountCents: 123456,
  currency: 'eur',
  description: 'x',
  subscriptionId: null,
  status: 'open',
  externalId: null,
  hostedUrl: null,
  createdAt: '2026-01-31T23:30:00.000Z',
  paidAt: null,
  voidedAt: null,
  buyer: { company: null, address: null, taxId: null },
};

describe('billing mail messages', () => {
  test('every catalogue has every sentence with the same slots as English: a translation cannot drop an amount or a date', () => {
    const english = BILLING_MAIL_CATALOGUES.en!;
    for (const [language, words] of Object.entries(BILLING_MAIL_CATALOGUES)) {
      for (const [key, text] of Object.entries(english)) {
        expect({ language, key, slots: slots(words[key as keyof typeof english]) }).toEqual({ language, key, slots: slots(text) });
      }
    }
  });

  test('a language without a catalogue, or none, is English', () => {
    expect(mailLanguage('ka')).toBe('en');
    expect(mailLanguage(null)).toBe('en');
    expect(mailLanguage('uk')).toBe('uk');
  });

  test('the HTML part escapes what it quotes (a custom plan name) and links what the text lists; dates are UTC, amounts in the currency', () => {
    const mail = invoiceIssuedMail({ id: 'acct_1', email: 'a@example.com', language: 'en' }, invoice, 'Acme <b>"Gold"</b> & co', links);
    expect(mail.kind).toBe('billing');
    expect(mail.body).toContain('Acme <b>"Gold"</b> & co plan, billed annually: €1,234.56');
    expect(mail.html).toContain('Acme &lt;b&gt;&quot;Gold&quot;&lt;/b&gt; &amp; co plan');
    expect(mail.html).not.toContain('<b>');
    expect(mail.html).toContain('<a href="https://vinhistory.test/account/billing/invoices/inv_1">');
    // Issued 31 January 23:30 UTC: due 14 days later, 14 February, whatever the server's time zone.
    expect(mail.body).toContain('by February 14, 2026');
  });

  test('a plan ending on manual invoices says to renew; one that will not renew, to choose a plan', () => {
    const account = { id: 'acct_1', email: 'a@example.com', language: 'ru' as const };
    const renewable = planEndMail(account, { when: 'ending', planName: 'Standard', endsAt: new Date('2026-05-01T00:00:00Z'), renewable: true }, links);
    expect(renewable.subject).toBe('Тариф Standard заканчивается 1 мая 2026 г.');
    expect(renewable.body).toContain('продлите его');
    const ended = planEndMail(account, { when: 'ended', planName: 'Standard', endsAt: new Date('2026-05-01T00:00:00Z'), renewable: true }, links);
    expect(ended.body).toContain('Выберите тариф');
    expect(ended.html).toContain('<html lang="ru" dir="ltr">');
  });
});
