import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../../../src/domain/watch.ts';
import { encodeCatalogueCursor } from '../../../src/market/market-query.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../support/fixtures.ts';

type Json = Record<string, any>;

/**
 * What Schemathesis (not installable here: PyPI is unreachable from this machine) would check of
 * the customers' document: every operation asked with each documented parameter and body field at
 * its documented bounds and examples, one at a time, all else valid. What the document says is
 * valid, the server must take: never a 422 (nor a 400 or a 5xx). Drift between a schema and what
 * the server takes fails here.
 */

/** Values a schema documents as valid: its examples, else its length or range bounds. */
function validValues(schema: Json, where: string): unknown[] {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples;
  if (Array.isArray(schema.enum)) return schema.enum;
  switch (schema.type) {
    case 'string':
      // A pattern cannot be walked without an example that matches it: the document must give one.
      if (schema.pattern !== undefined) throw new Error(`${where}: a string with a pattern and no example`);
      return [...new Set([Math.max(schema.minLength ?? 1, 1), schema.maxLength ?? 64])].map((length) => 'a'.repeat(length));
    case 'integer':
    case 'number':
      return [...new Set([schema.minimum ?? 1, schema.maximum ?? 1])];
    case 'boolean':
      return [true, false];
  }
  throw new Error(`${where}: no valid value known for ${JSON.stringify(schema)}`);
}

/**
 * The one value no schema can state: a cursor is valid only as the API gave it. This one has the
 * shape the API gives (domain/watch.ts), for a position after every row: an empty last page.
 */
const OVERRIDES: Record<string, unknown[]> = {
  cursor: [encodeCursor({ createdAt: '2000-01-01T00:00:00.000Z', id: 'wch_0000000000000000' })],
};

/** The same, where an operation's cursor has a shape of its own (the catalogue's: its sort and position). */
const OPERATION_OVERRIDES: Record<string, Record<string, unknown[]>> = {
  'GET /api/v1/lots': { cursor: [encodeCatalogueCursor('sale_date_desc', { value: '0000-01-01T00:00:00.000Z', auction: 'zzz', lotId: 0 })] },
};

/**
 * Parameters the document states in words as going together, which a schema cannot say: the
 * market's vehicle is `vin`, or `make`, `model` and `year` together. An operation listed here is
 * asked with `base` beside each parameter, and a parameter named in `with` with its companions
 * instead of `base`.
 */
const COMPANIONS: Record<string, { base: Record<string, string>; with: Record<string, Record<string, string>> }> = {
  'GET /api/v1/market': {
    base: { vin: '1HGCV1F36LA000011' },
    with: { vin: {}, make: { model: 'ACCORD', year: '2020' }, model: { make: 'HONDA', year: '2020' }, year: { make: 'HONDA', model: 'ACCORD' } },
  },
};

interface Variant {
  path: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: Json | undefined;
  label: string;
}

function variantsOf(operation: Json, where: string): Variant[] {
  const parameters: Json[] = operation.parameters ?? [];
  const overrides = { ...OVERRIDES, ...OPERATION_OVERRIDES[where] };
  const companions = COMPANIONS[where];
  const valuesOf = (name: string, schema: Json) => overrides[name] ?? validValues(schema, `${where} ${name}`);
  // A parameter's examples are the parameter's in OpenAPI (a map of named examples), not its schema's.
  const parameterValues = (parameter: Json): unknown[] => {
    const named = parameter.examples ? Object.values<Json>(parameter.examples).map((example) => example.value) : [];
    const examples = parameter.example !== undefined ? [parameter.example] : named;
    return overrides[parameter.name] ?? (examples.length > 0 ? examples : validValues(parameter.schema, `${where} ${parameter.name}`));
  };
  const base: Variant = { path: {}, query: {}, headers: {}, body: undefined, label: 'required only' };
  const into = { path: 'path', query: 'query', header: 'headers' } as const;
  for (const parameter of parameters) {
    if (parameter.required) base[into[parameter.in as keyof typeof into]][parameter.name] = String(parameterValues(parameter)[0]);
  }
  if (companions) base.query = { ...base.query, ...companions.base };
  const body: Json | undefined = operation.requestBody?.content?.['application/json']?.schema;
  const minimalBody = (branch: Json): Json =>
    Object.fromEntries([...(body!.required ?? []), ...(branch.required ?? [])].map((name: string) => [name, valuesOf(name, body!.properties[name])[0]]));
  if (body && operation.requestBody.required) base.body = minimalBody(body.oneOf?.[0] ?? {});
  const variants: Variant[] = [];
  for (const parameter of parameters) {
    for (const value of parameterValues(parameter)) {
      const variant = structuredClone(base);
      const together = parameter.in === 'query' ? companions?.with[parameter.name] : undefined;
      if (together) variant.query = { ...together };
      variant[into[parameter.in as keyof typeof into]][parameter.name] = String(value);
      variant.label = `${parameter.in} ${parameter.name}=${String(value).slice(0, 40)}${String(value).length > 40 ? `... (${String(value).length})` : ''}`;
      variants.push(variant);
    }
  }
  if (body) {
    // Each branch of a oneOf is a body of its own: its required fields, and the fields it allows.
    for (const branch of (body.oneOf ?? [{}]) as Json[]) {
      const allowed = Object.keys(body.properties).filter((name) => branch.properties?.[name] !== false);
      const minimal = minimalBody(branch);
      variants.push({ ...base, body: minimal, label: `body ${JSON.stringify(minimal)}` });
      for (const name of allowed) {
        for (const value of valuesOf(name, body.properties[name])) {
          variants.push({ ...base, body: { ...minimal, [name]: value }, label: `body ${name}=${JSON.stringify(value).slice(0, 40)}` });
        }
      }
    }
  }
  return variants.length > 0 ? variants : [base];
}

describe('the customers\' OpenAPI document is what the server takes', () => {
  let t: TestApp;
  let customer: Customer;
  let doc: Json;

  beforeAll(async () => {
    t = await createTestApp('sqlite');
    customer = await createCustomer(t.repos, { quota: 1_000_000, rate: 1_000_000 });
    // An auction is known from the lots stored: the documented example's auction holds one.
    await t.repos.lots.upsertBatch([makeLot({ vin: validVin(), auction: 'copart', lot_id: 90000011 })]);
    doc = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
  });
  afterAll(async () => t?.close());

  it('answers every operation asked at its documented bounds and examples without a 422, 400 or 5xx', async () => {
    const refused: string[] = [];
    let asked = 0;
    for (const [template, item] of Object.entries(doc.paths as Json)) {
      for (const [method, operation] of Object.entries(item as Json)) {
        // A ping goes out to the endpoint's address: it has no parameter or body to walk.
        if (template === '/api/v1/webhook/test') continue;
        const where = `${method.toUpperCase()} ${template}`;
        // An account of its own per operation: a documented Idempotency-Key names one search of one account.
        const { token } = await createCustomer(t.repos, { quota: 1_000_000, rate: 1_000_000 });
        for (const variant of variantsOf(operation, where)) {
          const url = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(variant.path[name]!));
          const query = new URLSearchParams(variant.query).toString();
          const res = await t.app.inject({
            method: method.toUpperCase() as 'GET',
            url: query ? `${url}?${query}` : url,
            headers: { authorization: token, ...variant.headers },
            ...(variant.body === undefined ? {} : { payload: variant.body }),
          });
          asked++;
          if (res.statusCode === 422 || res.statusCode === 400 || res.statusCode >= 500) refused.push(`${where} with ${variant.label}: ${res.statusCode} ${res.body.slice(0, 200)}`);
          const documented = Object.keys(operation.responses);
          if (!documented.includes(String(res.statusCode))) refused.push(`${where} with ${variant.label}: ${res.statusCode} is not documented (${documented.join(', ')})`);
        }
      }
    }
    expect(refused).toEqual([]);
    expect(asked).toBeGreaterThan(20);
  });

  it('documents the 422 of what it refuses at the bounds: one past each length or range', async () => {
    const cases: { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; url: string; payload?: Json; field: string; path: string }[] = [
      { method: 'DELETE', url: `/api/v1/watches/${'a'.repeat(65)}`, field: 'id', path: '/api/v1/watches/{id}' },
      { method: 'POST', url: `/api/v1/webhook/deliveries/${'a'.repeat(65)}/resend`, field: 'event_id', path: '/api/v1/webhook/deliveries/{event_id}/resend' },
      { method: 'GET', url: `/api/v1/watches?cursor=${'A'.repeat(201)}`, field: 'cursor', path: '/api/v1/watches' },
      { method: 'GET', url: `/api/v1/webhook/deliveries?cursor=${encodeURIComponent('é'.repeat(100))}`, field: 'cursor', path: '/api/v1/webhook/deliveries' },
      { method: 'GET', url: '/api/v1/watches?limit=101', field: 'limit', path: '/api/v1/watches' },
      { method: 'PUT', url: '/api/v1/webhook', payload: { url: '' }, field: 'url', path: '/api/v1/webhook' },
      { method: 'POST', url: '/api/v1/watches', payload: { vin: '4JGBF7BE5AA585531', auction: 'copart', lot_id: 1 }, field: 'body', path: '/api/v1/watches' },
      { method: 'POST', url: '/api/v1/watches', payload: { vin: '4JGBF7BE5AA585531', lot_id: 1 }, field: 'body', path: '/api/v1/watches' },
      { method: 'POST', url: '/api/v1/watches', payload: {}, field: 'body', path: '/api/v1/watches' },
      { method: 'POST', url: '/api/v1/watches', payload: { auction: 'copart', lot_id: 0 }, field: 'lot_id', path: '/api/v1/watches' },
    ];
    for (const { method, url, payload, field, path } of cases) {
      const res = await t.app.inject({ method, url, headers: { authorization: customer.token }, ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(422);
      expect(res.json().code).toBe('invalid_request');
      expect(Object.keys(res.json().errors), `${method} ${url}`).toEqual([field]);
      expect(Object.keys(doc.paths[path][method.toLowerCase()].responses), `${method} ${path}`).toContain('422');
    }
  });
});
