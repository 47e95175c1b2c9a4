import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ERRORS, ERROR_STATUS, kindOfStatus, PUBLIC_ERROR_CODES, type ErrorKind } from '../src/errors.ts';
import { createTestApp, type TestApp } from './support/app.ts';

type Json = Record<string, any>;

describe('the closed set of error codes', () => {
  it('gives every kind one status and a unique lower snake-case code, the 401 alone none', () => {
    for (const [kind, error] of Object.entries(API_ERRORS)) {
      expect(ERROR_STATUS[kind as ErrorKind]).toBe(error.status);
      if (kind === 'UNAUTHENTICATED') expect(error.code).toBeNull();
      else expect(error.code, kind).toMatch(/^[a-z]+(_[a-z]+)*$/);
    }
    expect(new Set(PUBLIC_ERROR_CODES).size).toBe(Object.keys(API_ERRORS).length - 1);
  });

  it("gives a framework's client error the kind of its status, and an unknown status a bad request", () => {
    expect(API_ERRORS[kindOfStatus(413)].code).toBe('payload_too_large');
    expect(API_ERRORS[kindOfStatus(404)].code).toBe('route_not_found');
    expect(API_ERRORS[kindOfStatus(418)].code).toBe('bad_request');
  });

  it('is the table of docs/api.md, row for row', () => {
    const doc = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8');
    const start = doc.indexOf('### Error codes');
    const section = doc.slice(start, doc.indexOf('\n## ', start));
    const rows = section
      .split('\n')
      .filter((line) => /^\| `[a-z_]+` \|/.test(line))
      .map((line) => line.split(' | ').map((cell) => cell.replace(/^\| |`| \|$/g, '')));
    expect(rows.map(([code, status]) => [code, Number(status)])).toEqual(
      Object.values(API_ERRORS).flatMap((error) => (error.code === null ? [] : [[error.code, error.status]])),
    );
  });
});

describe('the OpenAPI documents carry the codes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(async () => t?.close());

  /** The codes a response description names ("Code: `x`." / "Codes: `x`, `y`." / "No code."), or null. */
  const namedCodes = (description: string): string[] | null => {
    if (description.endsWith('No code.')) return [];
    const match = /Codes?: ((?:`[a-z_]+`(?:, )?)+)\.$/.exec(description);
    return match ? [...match[1]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!) : null;
  };
  const statusOf = (code: string) => Object.values(API_ERRORS).find((error) => error.code === code)!.status;

  it.each(['/api/v1/openapi.json', '/admin/v1/openapi.json'])('%s: the Error schema lists the set, and every error response names codes of its status', async (url) => {
    const doc = (await t.app.inject({ url })).json<Json>();
    expect(doc.components.schemas.Error.properties.code.enum).toEqual(PUBLIC_ERROR_CODES);
    const responses: [string, string, Json][] = [];
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, operation] of Object.entries(item as Json)) {
        for (const [status, response] of Object.entries((operation as Json).responses as Json)) responses.push([`${method} ${path} ${status}`, status, response]);
      }
    }
    let errors = 0;
    for (const [where, status, response] of responses) {
      const schema = response.content?.['application/json']?.schema;
      if (schema?.$ref !== '#/components/schemas/Error') continue;
      errors++;
      const codes = namedCodes(response.description);
      expect(codes, `${where}: ${response.description}`).not.toBeNull();
      if (status === '401') expect(codes, where).toEqual([]);
      else expect(codes!.length, where).toBeGreaterThan(0);
      for (const code of codes!) {
        const expected = status.toLowerCase() === '5xx' ? /^5\d\d$/ : new RegExp(`^${status}$`);
        expect(String(statusOf(code)), `${where} names ${code}`).toMatch(expected);
      }
    }
    expect(errors).toBeGreaterThan(5);
    // The answers to requests no operation takes are told in the description (no operation can refer to them).
    expect(doc.info.description).toContain('code: `method_not_allowed`.');
    expect(doc.info.description).toContain('code: `route_not_found`');
  });
});
