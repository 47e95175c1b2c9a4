import { expect } from 'vitest';
import type { App } from '../../src/app.ts';

type Responses = Record<string, unknown>;
interface Seen {
  operation: string;
  status: number;
  documented: string[];
}

/** Every answer of an operation the OpenAPI document describes, in this test file's process. */
const seen: Seen[] = [];

/** The documented response keys of an operation ('200', '5XX', ...), or null when it is not in the document. */
function documentedResponses(app: App, method: string, url: string): string[] | null {
  const doc = app.swagger() as unknown as { paths?: Record<string, Record<string, { responses?: Responses }>> };
  const path = url.replace(/:(\w+)/g, '{$1}');
  const operation = doc.paths?.[path]?.[method.toLowerCase()];
  return operation ? Object.keys(operation.responses ?? {}) : null;
}

/**
 * Records the status of every answer an app gives to a documented operation (routes the document
 * hides, the pages and requests no route takes are left out). Added by buildAppOn, before ready.
 */
export function recordDocumentedStatuses(app: App): void {
  app.addHook('onResponse', async (request, reply) => {
    const url = request.routeOptions.url;
    if (url === undefined || request.is404) return;
    const documented = documentedResponses(app, request.method, url);
    if (documented) seen.push({ operation: `${request.method} ${url}`, status: reply.statusCode, documented });
  });
}

/** Fails when a status the suite saw is not among the documented responses of its operation. */
export function expectDocumentedStatuses(): void {
  const undocumented = new Set<string>();
  for (const { operation, status, documented } of seen) {
    const covered = documented.includes(String(status)) || documented.includes(`${String(status)[0]}XX`);
    if (!covered) undocumented.add(`${operation} answered ${status}; documented: ${documented.join(', ')}`);
  }
  expect(seen.length, 'no answer of a documented operation was recorded').toBeGreaterThan(0);
  expect([...undocumented]).toEqual([]);
}

