import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';

/**
 * docs/api.md is the project's own reference of its interface, written by hand; the OpenAPI
 * document is generated from the route schemas. This keeps the first from falling behind the
 * second: an endpoint, a status or a response header the service documents must be in docs/api.md.
 */
const REFERENCE = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8');

interface Operation {
  responses: Record<string, { headers?: Record<string, unknown> }>;
}

describe('docs/api.md', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(async () => t?.close());

  it('names every operation, status and response header of the OpenAPI document', async () => {
    const doc = (await t.app.inject({ url: '/api/v1/openapi.json' })).json<{ paths: Record<string, Record<string, Operation>> }>();
    const missing: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const endpoint = `${method.toUpperCase()} ${path}`;
        if (!REFERENCE.includes(endpoint)) missing.push(endpoint);
        for (const [status, response] of Object.entries(operation.responses)) {
          if (!REFERENCE.includes(`\`${status.toLowerCase()}\``)) missing.push(`${endpoint}: status ${status}`);
          for (const header of Object.keys(response.headers ?? {})) {
            if (!REFERENCE.includes(header)) missing.push(`${endpoint}: header ${header}`);
          }
        }
      }
    }
    expect(Object.keys(doc.paths).length).toBeGreaterThan(1);
    expect(missing).toEqual([]);
  });

  it('describes every header the service reads or sends beyond the document', () => {
    for (const header of ['Authorization', 'Idempotency-Key', 'Idempotent-Replayed', 'X-Request-Id', 'WWW-Authenticate', 'Allow', 'Retry-After']) {
      expect(REFERENCE).toContain(`\`${header}\``);
    }
  });
});
