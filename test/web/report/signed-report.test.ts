import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { BRAND_LIMITS } from '../../../src/domain/brand.ts';
import { createTestApp, TEST_BASE_URL, type TestApp } from '../../support/app.ts';
import { DIALECTS } from '../../support/databases.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../support/fixtures.ts';
import { shortDigest } from '../../../src/verification/digest.ts';

interface Envelope {
  report: { report_url: string; vin: string; lots: unknown[] };
  issued_at: string;
  issuer: string;
  signature: string;
}

/** The proof: signatures checked by jose against the JWK Set the server serves, as a verifier outside would. */
describe.each(DIALECTS)('signed report JSON and the JWK Set on %s', (dialect) => {
  let t: TestApp;
  let customer: Customer;
  const vin = validVin('1FTFW1ET5DFC7777');

  const search = async (token = customer.token) => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: token }, payload: { vin } });
    expect(res.statusCode).toBe(200);
    return { body: res.body, path: new URL(res.json<{ report_url: string }>().report_url).pathname };
  };
  // Each from an address of its own: the checks' per-address guard is tested apart, below.
  let address = 0;
  const get = (url: string) => t.app.inject({ url, remoteAddress: `192.0.2.${++address % 250}` });
  const jwks = async () => {
    const res = await get('/.well-known/jwks.json');
    expect(res.statusCode).toBe(200);
    return res.json<JSONWebKeySet>();
  };
  const verify = async (signature: string) => compactVerify(signature, createLocalJWKSet(await jwks()), { algorithms: ['EdDSA'] });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    customer = await createCustomer(t.repos, { rate: 1000 });
    await t.repos.lots.upsertBatch([makeLot({ vin, auction: 'copart', lot_id: 41000001, price: 4000, sale_date: '2024-06-12T15:30:00.000Z', primary_damage: 'FRONT END — «ü»' })]);
  });
  afterAll(async () => t?.close());

  it('answers the report as the search answered it, with an EdDSA JWS over exactly its bytes that jose verifies with the served keys', async () => {
    const answered = await search();
    const res = await get(`${answered.path}.json`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const envelope = res.json<Envelope>();
    expect(Object.keys(envelope)).toEqual(['report', 'issued_at', 'issuer', 'signature']);
    expect(envelope.report).toEqual(JSON.parse(answered.body));
    expect(envelope.issuer).toBe(TEST_BASE_URL);
    expect(Date.parse(envelope.issued_at)).not.toBeNaN();
    const header = decodeProtectedHeader(envelope.signature);
    expect(header.alg).toBe('EdDSA');
    expect((await jwks()).keys.map((key) => key.kid)).toContain(header.kid);
    const { payload } = await verify(envelope.signature);
    // The payload is the search's own answer, byte for byte, and the body carries it as those bytes.
    expect(new TextDecoder().decode(payload)).toBe(answered.body);
    expect(res.body).toContain(`{"report":${answered.body},`);
    // Signed once: asked again, the same signature.
    expect((await get(`${answered.path}.json`)).body).toBe(res.body);
  });

  it('is refused once one byte of the snapshot is changed', async () => {
    const { path } = await search();
    const { signature } = (await get(`${path}.json`)).json<Envelope>();
    const [header, payload, sig] = signature.split('.') as [string, string, string];
    const bytes = Buffer.from(payload, 'base64url');
    const at = bytes.indexOf('4000');
    expect(at).toBeGreaterThan(0);
    bytes[at] = '5'.charCodeAt(0);
    const forged = `${header}.${bytes.toString('base64url')}.${sig}`;
    await expect(verify(forged)).rejects.toThrow(/signature verification failed/);
    expect(await t.app.services.verification.check(forged)).toBeNull();
    expect(await t.app.services.verification.check(signature)).not.toBeNull();
  });

  it('keeps verifying reports signed before a rotation, and signs later ones with the new key', async () => {
    const before = await search();
    const old = (await get(`${before.path}.json`)).json<Envelope>();
    const rotated = await t.app.services.signingKeys.rotate();
    const after = await search();
    const fresh = (await get(`${after.path}.json`)).json<Envelope>();
    expect(decodeProtectedHeader(fresh.signature).kid).toBe(rotated.kid);
    expect(decodeProtectedHeader(old.signature).kid).not.toBe(rotated.kid);
    const keys = await jwks();
    expect(keys.keys[0]!.kid).toBe(rotated.kid);
    expect(keys.keys.length).toBeGreaterThanOrEqual(2);
    await verify(old.signature);
    await verify(fresh.signature);
    // The earlier report's signature is the one it had.
    expect((await get(`${before.path}.json`)).json<Envelope>().signature).toBe(old.signature);
  });

  it("names the reseller's address in a white-label report and the service as its issuer", async () => {
    const reseller = await createCustomer(t.repos, { rate: 1000 });
    await t.repos.brands.create(reseller.accountId, true, { name: 'Resale Motors', accent: null, contact: null, reportBaseUrl: 'https://reports.resale.example' }, new Date(), BRAND_LIMITS.namedBrands);
    const { path, body } = await search(reseller.token);
    const envelope = (await get(`${path}.json`)).json<Envelope>();
    expect(envelope.report.report_url).toBe(`https://reports.resale.example${path}`);
    expect(envelope.issuer).toBe(TEST_BASE_URL);
    expect(decodeProtectedHeader(envelope.signature).iss).toBe(TEST_BASE_URL);
    expect(new TextDecoder().decode((await verify(envelope.signature)).payload)).toBe(body);
    const signed = await t.app.services.verification.signed(path.split('/').pop()!);
    expect(signed!.digest).toBe(shortDigest(body));
    // The branded page shows the same digest and links its signed JSON through the reseller's proxy, never our /verify.
    const page = (await get(path)).body;
    expect(page).toContain(`<code dir="ltr" data-digest>${signed!.digest}</code>`);
    expect(page).toContain(`href="./${path.split('/').pop()!}.json"`);
    expect(page).not.toContain('/verify');
  });

  it('shows the digest of the signed payload and a QR code on the report page, with links to /verify and the JSON', async () => {
    const answered = await search();
    const id = answered.path.split('/').pop()!;
    const page = (await get(`${answered.path}?lang=uk`)).body;
    expect(page).toContain(`<code dir="ltr" data-digest>${shortDigest(answered.body)}</code>`);
    expect(page).toContain('Перевірте справжність звіту');
    expect(page).toMatch(/<div class="verification__qr" role="img" aria-label="[^"]+"><svg /);
    expect(page).toContain(`href="/verify?report=${id}"`);
    expect(page).toContain(`href="/report/${id}.json"`);
  });

  it('answers 429 with Retry-After past the per-address rate of the free checks', async () => {
    const answers = await Promise.all(Array.from({ length: 11 }, () => t.app.inject({ url: '/.well-known/jwks.json', remoteAddress: '198.51.100.7' })));
    const refused = answers.filter((res) => res.statusCode === 429);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(refused[0]!.json()).toMatchObject({ code: 'rate_limited' });
  });

  it('answers an unknown or malformed id with a JSON 404', async () => {
    for (const id of ['0b9c3f5e-4f6a-4d8e-9a1b-2c3d4e5f6a7b', 'not-a-report']) {
      const res = await get(`/report/${id}.json`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ code: 'report_not_found', message: expect.stringContaining('No report has this id') });
    }
  });
});
