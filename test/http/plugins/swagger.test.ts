import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_BASE_URL, type TestApp } from '../../support/app.ts';
import { createCustomer } from '../../support/fixtures.ts';

type Json = Record<string, any>;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every response object of a document, with where it is. */
function responsesOf(doc: Json): { where: string; response: Json }[] {
  const found: { where: string; response: Json }[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      for (const [status, response] of Object.entries<Json>(operation.responses)) found.push({ where: `${method} ${path} ${status}`, response });
    }
  }
  return found;
}

describe('API documentation and health', () => {
  let t: TestApp;
  let customerDoc: Json;
  let operatorDoc: Json;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
    customerDoc = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
    operatorDoc = (await t.app.inject({ url: '/admin/v1/openapi.json' })).json();
  });
  afterAll(async () => t?.close());

  it('serves OpenAPI 3.1 generated from the route schemas, every status of the contract documented', async () => {
    const res = await t.app.inject({ url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers[0].url).toBe('https://vinhistory.test');
    for (const method of ['get', 'post']) {
      const operation = doc.paths['/api/v1/search'][method];
      const bodyStatuses = method === 'post' ? ['400', '415'] : [];
      expect(Object.keys(operation.responses).sort()).toEqual(['200', '401', '402', '404', '413', '422', '429', '503', '5XX', ...bodyStatuses].sort());
      expect(operation.security).toEqual([{ apiToken: [] }]);
      for (const status of ['200', '404', '429']) {
        expect(Object.keys(operation.responses[status].headers)).toEqual(
          expect.arrayContaining(['RateLimit-Policy', 'RateLimit', 'X-RateLimit-Limit', 'X-RateLimit-Remaining']),
        );
      }
      expect(operation.responses['429'].headers['Retry-After']).toBeDefined();
    }
    expect(doc.paths['/api/v1/search'].post.requestBody.content['application/json'].schema).toBeDefined();
    expect(doc.paths['/api/v1/search'].get.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['vin', 'idempotency-key']));
    expect(doc.components.schemas.Lot.required).toContain('secondary_damage');
    expect(doc.paths['/healthz']).toBeUndefined();
  });

  it('keeps the admin API out of the customer document and its reference page', async () => {
    // Beside /api/, only the public report JSON and keys of verifiable reports (docs/reports.md).
    expect(Object.keys(customerDoc.paths).filter((path) => !path.startsWith('/api/'))).toEqual(['/report/{id}.json', '/.well-known/jwks.json']);
    expect(Object.keys(customerDoc.components.securitySchemes)).toEqual(['apiToken']);
    expect(Object.keys(customerDoc.components.schemas)).not.toContain('AdminImportResult');
    const page = await t.app.inject({ url: '/docs/json' });
    expect(page.statusCode).toBe(200);
    expect(page.json()).toEqual(customerDoc);
  });

  it('serves the operator document with the admin operations, their NDJSON body and the operator token scheme', async () => {
    expect(operatorDoc.openapi).toBe('3.1.0');
    expect(Object.keys(operatorDoc.paths).sort()).toEqual([
      '/admin/v1/accounts',
      '/admin/v1/accounts/{account}',
      '/admin/v1/accounts/{account}/subscription/change',
      '/admin/v1/accounts/{account}/subscription/end',
      '/admin/v1/accounts/{account}/subscription/extend',
      '/admin/v1/accounts/{account}/tokens',
      '/admin/v1/audit',
      '/admin/v1/feeds',
      '/admin/v1/feeds/{name}',
      '/admin/v1/feeds/{name}/pause',
      '/admin/v1/feeds/{name}/resume',
      '/admin/v1/feeds/{name}/run',
      '/admin/v1/invoices',
      '/admin/v1/invoices/{invoice}/pay',
      '/admin/v1/invoices/{invoice}/void',
      '/admin/v1/lots',
      '/admin/v1/tokens/{token}/revoke',
    ]);
    expect(Object.keys(operatorDoc.components.securitySchemes)).toEqual(['operatorToken']);
    const upload = operatorDoc.paths['/admin/v1/lots'].post;
    expect(upload.security).toEqual([{ operatorToken: [] }]);
    expect(upload.requestBody.required).toBe(true);
    expect(Object.keys(upload.requestBody.content)).toContain('application/x-ndjson');
    expect(upload.requestBody.description).toMatch(/gzip/);
    expect(Object.keys(operatorDoc.components.schemas).sort()).toEqual(['AdminAccount', 'AdminAccountDetails', 'AdminAuditEntry', 'AdminFeed', 'AdminImportResult', 'AdminInvoice', 'AdminToken', 'AdminUsage', 'Error']);
  });

  it('leaves a search\'s vin and Idempotency-Key rules to the server\'s 422, and states the watch VIN\'s pattern', async () => {
    const post = customerDoc.paths['/api/v1/search'].post;
    const get = customerDoc.paths['/api/v1/search'].get;
    // A validating proxy refuses what breaks a schema itself (test/http/plugins/prism-proxy.test.ts):
    // the search's fields are plain strings, their rule in words, the refusal the server's 422.
    // A parameter's description sits on the parameter, a body field's on its schema.
    const vinParameter = get.parameters.find((p: Json) => p.name === 'vin');
    const vins = [post.requestBody.content['application/json'].schema.properties.vin, { ...vinParameter.schema, description: vinParameter.description }];
    for (const vin of vins) {
      expect(vin.type).toBe('string');
      for (const bound of ['pattern', 'minLength', 'maxLength']) expect(vin).not.toHaveProperty(bound);
      expect(vin.description).toMatch(/17 characters of 0-9 A-H J-N P R-Z.*check digit.*422 with errors\.vin/);
    }
    for (const operation of [post, get, customerDoc.paths['/api/v1/lots/{auction}/{lot_id}'].get]) {
      const key = operation.parameters.find((p: Json) => p.name === 'idempotency-key');
      expect(key.schema.type).toBe('string');
      for (const bound of ['pattern', 'minLength', 'maxLength']) expect(key.schema).not.toHaveProperty(bound);
      expect(key.description).toMatch(/1 to 255 visible ASCII characters.*422 with errors\['Idempotency-Key'\]/);
      expect(operation.responses['422'].description).toMatch(/Idempotency-Key/);
    }
    const { token } = await createCustomer(t.repos, { quota: 1_000_000, rate: 1_000_000 });
    const search = (vin: string, headers: Record<string, string> = {}) =>
      t.app.inject({ url: `/api/v1/search?vin=${encodeURIComponent(vin)}`, headers: { authorization: token, ...headers } });
    for (const good of ['1HGCM82633A004352', ' 1hgcm82633a004352 ', 'WDB1240821A123456']) expect((await search(good)).statusCode, good).toBe(404);
    for (const bad of ['', 'ABC123', '1HGCM82633A0043521', '1HGCM82633A00I352', '1HGCM82633A00O352']) {
      const res = await search(bad);
      expect(res.statusCode, bad).toBe(422);
      expect(Object.keys(res.json().errors), bad).toEqual(['vin']);
    }
    for (const good of ['a', 'order-42', 'x'.repeat(255), ' spaced ']) expect((await search('WDB1240821A123456', { 'idempotency-key': good })).statusCode, good).toBe(404);
    for (const bad of ['', 'x'.repeat(256), 'two words', 'caf\u00e9']) {
      const res = await search('WDB1240821A123456', { 'idempotency-key': bad });
      expect(res.statusCode, bad).toBe(422);
      expect(Object.keys(res.json().errors), bad).toEqual(['Idempotency-Key']);
    }
    // A watch's VIN is the document's to bound (Schemathesis asks it), so its schema keeps the pattern.
    const watchVin = customerDoc.paths['/api/v1/watches'].post.requestBody.content['application/json'].schema.properties.vin;
    const pattern = new RegExp(watchVin.pattern, 'u');
    expect(watchVin.minLength).toBe(17);
    for (const good of ['1HGCM82633A004352', ' 1hgcm82633a004352 ', 'WDB1240821A123456']) expect(pattern.test(good), good).toBe(true);
    for (const bad of ['', 'ABC123', '1HGCM82633A0043521', '1HGCM82633A00I352', '1HGCM82633A00O352']) expect(pattern.test(bad), bad).toBe(false);
  });

  it('refers to the Lot schema from the Report, declares its tags, and describes every response', async () => {
    expect(customerDoc.components.schemas.Report.properties.lots.items).toEqual({ $ref: '#/components/schemas/Lot' });
    for (const doc of [customerDoc, operatorDoc]) {
      const declared = doc.tags.map((tag: { name: string }) => tag.name);
      const used = Object.values<Json>(doc.paths).flatMap((item) => Object.values<Json>(item).flatMap((operation) => operation.tags));
      expect(declared.sort()).toEqual([...new Set(used)].sort());
      for (const { where, response } of responsesOf(doc)) expect(response.description, where).not.toBe('Default Response');
      expect(doc.info.license.name).toBeTruthy();
      expect(doc.info.license.url ?? doc.info.license.identifier).toBeTruthy();
      expect(doc.info.contact.url ?? doc.info.contact.email).toBeTruthy();
    }
  });

  it('documents the response headers the service sends', async () => {
    for (const doc of [customerDoc, operatorDoc]) {
      for (const { where, response } of responsesOf(doc)) expect(response.headers?.['X-Request-Id'], where).toBeDefined();
      for (const { where, response } of responsesOf(doc).filter(({ where }) => where.endsWith(' 401'))) {
        expect(response.headers['WWW-Authenticate'], where).toBeDefined();
      }
      expect(doc.info.description).toMatch(/answers 405 with `Allow` \(the methods it answers\) and an `Error` body, code: `method_not_allowed`\./);
    }
    expect(customerDoc.paths['/api/v1/usage'].get.responses['429'].headers['Retry-After']).toBeDefined();
    for (const method of ['get', 'post']) {
      for (const status of ['200', '404']) {
        expect(customerDoc.paths['/api/v1/search'][method].responses[status].headers['Idempotent-Replayed']).toBeDefined();
      }
    }
  });

  it('serves the reference page at /docs in the site\'s layout: customer operations only, samples in four languages, no CDN', async () => {
    expect((await t.app.inject({ url: '/docs/' })).headers.location).toBe('/docs');
    const res = await t.app.inject({ url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).not.toMatch(/https?:\/\/(cdn|unpkg|cdnjs|jsdelivr)/);
    // The site's header and footer, the strict CSP of every page (no inline script or style).
    expect(res.body).toContain('class="site-header"');
    expect(res.body).toContain('href="/terms"');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).not.toContain('unsafe-inline');
    for (const operation of ['searchPost', 'searchGet', 'usage']) expect(res.body).toContain(`id="${operation}"`);
    expect(res.body).not.toContain('/admin/');
    expect(res.body).not.toContain('vh_op_');
    // Every operation of the customer document (the hidden ones never reach it) has its four samples on the page.
    const operations = Object.entries<Json>(customerDoc.paths).flatMap(([path, item]) =>
      Object.entries<Json>(item)
        .filter(([method, operation]) => HTTP_METHODS.includes(method) && operation['x-hidden'] !== true)
        .map(([method, operation]) => ({ id: operation.operationId as string, method: method.toUpperCase(), path })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(3);
    const articles = new Map(
      res.body.split('<article class="card operation" id="').slice(1).map((chunk) => [chunk.slice(0, chunk.indexOf('"')), chunk.slice(0, chunk.indexOf('</article>'))]),
    );
    expect([...articles.keys()].sort()).toEqual(operations.map((operation) => operation.id).sort());
    for (const { id, method, path } of operations) {
      const article = articles.get(id)!;
      expect(article, id).toContain(`<span class="mono operation__path">${path}</span>`);
      expect(article, id).toContain(`>${method}</span>`);
      for (const language of ['curl', 'TypeScript', 'Python', 'PHP']) expect(article.match(new RegExp(`<summary>${language}</summary>`, 'g')), `${id} ${language}`).toHaveLength(1);
    }
    for (const language of ['curl', 'TypeScript', 'Python', 'PHP']) expect(res.body.match(new RegExp(`<summary>${language}</summary>`, 'g'))).toHaveLength(operations.length);
    expect(res.body).toContain(`curl -X POST &quot;${TEST_BASE_URL}/api/v1/search&quot;`);
    // The TypeScript and Python samples call the SDKs (sdks/), beside curl and PHP.
    expect(res.body).toContain('client.searchGet({ vin: &#39;4JGBF7BE5AA585531&#39; })');
    expect(res.body).toContain('client.search_get(vin=&quot;4JGBF7BE5AA585531&quot;)');
    expect(res.body).toContain('client.lotLookup({ auction: &#39;copart&#39;, lot_id: 90000011 })');
    // A path parameter is one of the path: in the table, in curl's URL, and in "try it" (assets/docs.js fills it in).
    const lookup = articles.get('lotLookup')!;
    expect(lookup).toContain(`curl &quot;${TEST_BASE_URL}/api/v1/lots/copart/90000011&quot;`);
    expect(lookup).toMatch(/<code>lot_id<\/code>.*?<td data-label="In">path<\/td>/);
    expect(lookup).toContain('data-path-param="auction" value="copart"');
    // Every sample names the required VIN, from the document's examples.
    expect(res.body).toContain(`curl &quot;${TEST_BASE_URL}/api/v1/search?vin=4JGBF7BE5AA585531&quot;`);
    expect(res.body).toContain('curl_init(');
    // "Try it" is the page's own script, on the host the page is opened on.
    expect(res.body).toMatch(/<script src="\/assets\/docs\.js\?v=\w+" defer><\/script>/);
    expect(res.body).toContain('data-try data-method="GET" data-path="/api/v1/search"');
    const script = await t.app.inject({ url: '/assets/docs.js' });
    expect(script.statusCode).toBe(200);
    expect(script.body).toContain('window.location.pathname');
  });

  it('serves the landing page at the root, linking the API reference', async () => {
    const res = await t.app.inject({ url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('href="/docs"');
  });

  it('answers /healthz with 200 while the database answers', async () => {
    const res = await t.app.inject({ url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });
});
