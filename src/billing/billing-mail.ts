import type { Invoice } from '../domain/invoice.ts';
import { invoiceDueAt } from '../domain/invoice.ts';
import { DEFAULT_REPORT_LANGUAGE, RTL_LANGUAGES, type ReportLanguage } from '../domain/report-language.ts';
import type { MailToQueue } from '../accounts/mail/messages.ts';
import { BILLING_MAIL_CATALOGUES, type BillingMailWords } from './billing-mail-catalogue.ts';

/** Who a customer's billing mail goes to and in which language. */
export interface MailAccount {
  id: string;
  email: string;
  language: ReportLanguage | null;
}

/** Absolute links of the customer's pages, made by the container from PUBLIC_BASE_URL. */
export interface BillingLinks {
  billing: string;
  invoice(id: string): string;
}

/** A paragraph of a mail: its words, and a link shown after them (an anchor in the HTML part). */
type Paragraph = { text: string; link?: string };

/** The language of a customer's mail: the account's, when a catalogue of billing mail exists for it. */
export function mailLanguage(language: ReportLanguage | null): ReportLanguage {
  return language && BILLING_MAIL_CATALOGUES[language] ? language : DEFAULT_REPORT_LANGUAGE;
}

function words(language: ReportLanguage): BillingMailWords {
  return BILLING_MAIL_CATALOGUES[language] ?? BILLING_MAIL_CATALOGUES[DEFAULT_REPORT_LANGUAGE]!;
}

/** `{name}` slots filled; a slot without a value stays visible rather than silently empty. */
function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (slot, name: string) => (name in values ? String(values[name]) : slot));
}

export function formatMoney(cents: number, currency: string, language: ReportLanguage): string {
  return new Intl.NumberFormat(language, { style: 'currency', currency: currency.toUpperCase() }).format(cents / 100);
}

export function formatDay(at: Date | string, language: ReportLanguage): string {
  return new Intl.DateTimeFormat(language, { dateStyle: 'long', timeZone: 'UTC' }).format(new Date(at));
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The same paragraphs as text and as HTML: the HTML part adds nothing the text does not say. */
function compose(input: { to: string; language: ReportLanguage; subject: string; paragraphs: Paragraph[]; signature: string }): MailToQueue {
  const { language } = input;
  const text = [...input.paragraphs.flatMap((p) => (p.link ? [p.text, p.link] : [p.text]).concat('')), input.signature, ''].join('\n');
  const dir = RTL_LANGUAGES.has(language) ? 'rtl' : 'ltr';
  const body = input.paragraphs
    .map((p) => `<p>${escapeHtml(p.text)}${p.link ? `<br><a href="${escapeHtml(p.link)}">${escapeHtml(p.link)}</a>` : ''}</p>`)
    .join('\n');
  const html = `<!doctype html>
<html lang="${language}" dir="${dir}"><head><meta charset="utf-8"><title>${escapeHtml(input.subject)}</title></head>
<body style="font-family: sans-serif; line-height: 1.5; max-width: 40em">
${body}
<p>${escapeHtml(input.signature)}</p>
</body></html>
`;
  return { kind: 'billing', recipient: input.to, subject: input.subject, body: text, html };
}

function planWords(w: BillingMailWords, planName: string, billing: Invoice['billing']): string {
  return fill(w.planCycle, { plan: planName, cycle: billing === 'annual' ? w.annual : w.monthly });
}

/** The customer's invoice, issued: what, how much, by when, and its page. */
export function invoiceIssuedMail(account: MailAccount, invoice: Invoice, planName: string, links: BillingLinks): MailToQueue {
  const language = mailLanguage(account.language);
  const w = words(language);
  const values = {
    reference: invoice.reference,
    plan: planWords(w, planName, invoice.billing),
    amount: formatMoney(invoice.amountCents, invoice.currency, language),
    due: formatDay(invoiceDueAt(invoice), language),
  };
  return compose({
    to: account.email,
    language,
    subject: fill(w.invoiceSubject, values),
    signature: w.signature,
    paragraphs: [
      { text: w.hello },
      { text: fill(w.invoiceIssued, values) },
      { text: fill(invoice.provider === 'manual' ? w.invoicePayManual : w.invoicePayCard, values) },
      { text: w.invoiceLink, link: links.invoice(invoice.id) },
    ],
  });
}

/** The customer's receipt for a paid invoice. */
export function receiptMail(account: MailAccount, invoice: Invoice, planName: string, links: BillingLinks): MailToQueue {
  const language = mailLanguage(account.language);
  const w = words(language);
  const values = {
    reference: invoice.reference,
    plan: planWords(w, planName, invoice.billing),
    amount: formatMoney(invoice.amountCents, invoice.currency, language),
    date: formatDay(invoice.paidAt ?? invoice.createdAt, language),
  };
  return compose({
    to: account.email,
    language,
    subject: fill(w.receiptSubject, values),
    signature: w.signature,
    paragraphs: [{ text: w.hello }, { text: fill(w.receiptBody, values) }, { text: w.invoiceLink, link: links.invoice(invoice.id) }],
  });
}

export type QuotaThreshold = 80 | 100;

/** A warning that the period's searches are 80% or all used. */
export function quotaMail(
  account: MailAccount,
  input: { threshold: QuotaThreshold; used: number; quota: number; planName: string; periodEnd: Date },
  links: BillingLinks,
): MailToQueue {
  const language = mailLanguage(account.language);
  const w = words(language);
  const integer = new Intl.NumberFormat(language);
  const values = { used: integer.format(input.used), quota: integer.format(input.quota), plan: input.planName, reset: formatDay(input.periodEnd, language) };
  return compose({
    to: account.email,
    language,
    subject: fill(input.threshold === 100 ? w.quotaFullSubject : w.quotaNearSubject, values),
    signature: w.signature,
    paragraphs: [
      { text: w.hello },
      { text: fill(input.threshold === 100 ? w.quotaFullBody : w.quotaNearBody, values) },
      { text: w.quotaMore, link: links.billing },
    ],
  });
}

/** A plan ends soon (`ending`) or has ended (`ended`). */
export function planEndMail(account: MailAccount, input: { when: 'ending' | 'ended'; planName: string; endsAt: Date; renewable: boolean }, links: BillingLinks): MailToQueue {
  const language = mailLanguage(account.language);
  const w = words(language);
  const values = { plan: input.planName, date: formatDay(input.endsAt, language) };
  const ending = input.when === 'ending';
  return compose({
    to: account.email,
    language,
    subject: fill(ending ? w.planEndingSubject : w.planEndedSubject, values),
    signature: w.signature,
    paragraphs: [
      { text: w.hello },
      { text: fill(ending ? w.planEndingBody : w.planEndedBody, values) },
      { text: ending && input.renewable ? w.planRenew : w.planChoose, link: links.billing },
    ],
  });
}

/** The operator's copy of a new invoice, in English (the operator's language is not known). */
export function operatorInvoiceMail(operator: string, account: MailAccount, invoice: Invoice, planName: string): MailToQueue {
  const amount = formatMoney(invoice.amountCents, invoice.currency, 'en');
  return compose({
    to: operator,
    language: 'en',
    subject: `New invoice ${invoice.reference}: ${account.email}, ${amount}`,
    signature: 'vinhistory',
    paragraphs: [
      { text: `Invoice ${invoice.reference} (${invoice.id}) was issued to ${account.email} (${account.id}) on ${formatDay(invoice.createdAt, 'en')}.` },
      { text: `${planName} plan, ${invoice.billing}, ${invoice.kind}: ${amount}, paid by ${invoice.provider === 'manual' ? 'bank transfer' : 'card (Stripe)'}.` },
      ...(invoice.provider === 'manual' ? [{ text: `When the transfer arrives: vinhistory invoices pay ${invoice.reference}` }] : []),
    ],
  });
}

/** The operator's copy of a payment. */
export function operatorPaymentMail(operator: string, account: MailAccount, invoice: Invoice, planName: string): MailToQueue {
  const amount = formatMoney(invoice.amountCents, invoice.currency, 'en');
  return compose({
    to: operator,
    language: 'en',
    subject: `Payment: ${account.email} paid ${invoice.reference}, ${amount}`,
    signature: 'vinhistory',
    paragraphs: [
      { text: `Invoice ${invoice.reference} (${invoice.id}) of ${account.email} (${account.id}) was paid on ${formatDay(invoice.paidAt ?? invoice.createdAt, 'en')}.` },
      { text: `${planName} plan, ${invoice.billing}, ${invoice.kind}: ${amount}, by ${invoice.provider === 'manual' ? 'bank transfer' : 'card (Stripe)'}.` },
    ],
  });
}
