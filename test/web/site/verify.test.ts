import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument } from 'pdf-lib';
import { stampPdf } from '../../../src/verification/pdf-stamp.ts';
import { createAccountTestApp, csrfOf, type AccountTestApp } from '../../support/customer-app.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../support/fixtures.ts';

/** A one-page PDF (pdf-lib), stamped as the report route stamps a printed report, or not at all. */
async function pdfFor(stamp: { reportId: string; reportUrl: string; digest: string } | null): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.addPage([200, 200]);
  const bytes = await doc.save();
  return stamp ? stampPdf(bytes, stamp) : Buffer.from(bytes);
}

/** A multipart body of the form's fields. */
function multipart(fields: Record<string, string | { file: Buffer; name: string }>): { payload: Buffer; headers: Record<string, string> } {
  const boundary = '----vinhistory-verify-test';
  const parts = Object.entries(fields).map(([name, value]) =>
    typeof value === 'string'
      ? Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
      : Buffer.concat([Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"; filename="${value.name}"\r\ncontent-type: application/pdf\r\n\r\n`), value.file, Buffer.from('\r\n')]),
  );
  return { payload: Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

describe('the /verify page', () => {
  let t: AccountTestApp;
  let customer: Customer;
  let reportPath: string;
  let reportId: string;
  let digest: string;
  let address = 0;
  const vin = validVin('1FTFW1ET5DFC7777');

  /** The form's page and its cookies, then the form sent with them, from an address of its own. */
  async function send(fields: Record<string, string | { file: Buffer; name: string }>) {
    const remoteAddress = `192.0.2.${++address}`;
    const page = await t.app.inject({ url: '/verify', remoteAddress });
    const cookie = page.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    const body = multipart({ _csrf: csrfOf(page.body), ...fields });
    return t.app.inject({ method: 'POST', url: '/verify', remoteAddress, payload: body.payload, headers: { ...body.headers, cookie } });
  }

  beforeAll(async () => {
    t = await createAccountTestApp('sqlite');
    customer = await createCustomer(t.repos, { rate: 1000 });
    await t.repos.lots.upsertBatch([makeLot({ vin, auction: 'copart', lot_id: 41000001, price: 4000, name: '2013 FORD F-150', primary_damage: 'FRONT END', sale_date: '2024-06-12T15:30:00.000Z' })]);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    reportPath = new URL(res.json<{ report_url: string }>().report_url).pathname;
    reportId = reportPath.split('/').pop()!;
    digest = (await t.app.services.verification.signed(reportId))!.digest;
  });
  afterAll(async () => t?.close());

  it('shows the form, and the verdict of a report link from the report page', async () => {
    const form = await t.app.inject({ url: '/verify' });
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('Is this report genuine?');
    expect(form.body).toContain('enctype="multipart/form-data"');
    const res = await t.app.inject({ url: `/verify?report=${reportId}`, remoteAddress: '192.0.2.200' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Genuine: this report was made and signed by us');
    expect(res.body).toContain(vin);
    expect(res.body).toContain('Copart lot 41000001');
    expect(res.body).toContain('$4,000');
    expect(res.body).toContain(digest);
  });

  it('checks a pasted link, ours or a reseller’s, and says so of an unknown or malformed one', async () => {
    const ours = await send({ link: `https://vinhistory.test${reportPath}?lang=pl` });
    expect(ours.statusCode).toBe(200);
    expect(ours.body).toContain('Genuine');
    const theirs = await send({ link: `https://reports.resale.example${reportPath}.pdf` });
    expect(theirs.body).toContain('Genuine');
    const unknown = await send({ link: 'https://vinhistory.test/report/0b9c3f5e-4f6a-4d8e-9a1b-2c3d4e5f6a7b' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('We have no report 0b9c3f5e-4f6a-4d8e-9a1b-2c3d4e5f6a7b');
    const malformed = await send({ link: 'https://vinhistory.test/pricing' });
    expect(malformed.statusCode).toBe(422);
    expect(malformed.body).toContain('That is not a report link');
    const empty = await send({ link: '' });
    expect(empty.statusCode).toBe(422);
    expect(empty.body).toContain('Paste a report link');
  });

  it('checks an uploaded PDF: genuine, changed, naming no report, or not a PDF at all', async () => {
    const stamp = { reportId, reportUrl: `https://vinhistory.test${reportPath}`, digest };
    const genuine = await send({ pdf: { file: await pdfFor(stamp), name: 'report.pdf' } });
    expect(genuine.statusCode).toBe(200);
    expect(genuine.body).toContain('Genuine: this report was made and signed by us');
    const changed = await send({ pdf: { file: await pdfFor({ ...stamp, digest: '0123456789abcdef' }), name: 'report.pdf' } });
    expect(changed.statusCode).toBe(200);
    expect(changed.body).toContain('Changed: this PDF is not the report we signed');
    expect(changed.body).toContain('0123456789abcdef');
    const foreign = await send({ pdf: { file: await pdfFor(null), name: 'other.pdf' } });
    expect(foreign.statusCode).toBe(422);
    expect(foreign.body).toContain('This PDF names no report of ours');
    const text = await send({ pdf: { file: Buffer.from('not a pdf'), name: 'x.pdf' } });
    expect(text.statusCode).toBe(422);
    expect(text.body).toContain('That file is not a PDF');
  });

  it('refuses an upload over its bound, saying the bound', async () => {
    const big = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(20 * 1024 * 1024 + 10, 0x20)]);
    const res = await send({ pdf: { file: big, name: 'big.pdf' } });
    expect(res.statusCode).toBe(413);
    expect(res.body).toContain('larger than 20 MiB');
  });
});
