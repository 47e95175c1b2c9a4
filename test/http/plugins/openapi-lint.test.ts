import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../support/app.ts';

/** What Redocly's recommended rules find in a served document, as "severity rule: message at pointer". */
async function lint(source: string): Promise<{ errors: string[]; warnings: string[] }> {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config });
  const describe = (problem: (typeof problems)[number]) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer ?? '?'}`;
  return {
    errors: problems.filter((problem) => problem.severity === 'error').map(describe),
    warnings: problems.filter((problem) => problem.severity === 'warn').map(describe),
  };
}

describe('the OpenAPI documents pass Redocly lint', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(async () => t?.close());

  // The answers to requests no operation takes (a wrong method, an unknown path) are documented as
  // components that no operation can refer to: the only warnings allowed.
  const unroutedAnswers = ['MethodNotAllowed', 'NotFound'].map(
    (name) => `no-unused-components: Component: "${name}" is never used. at #/components/responses/${name}`,
  );

  it.each(['/api/v1/openapi.json', '/admin/v1/openapi.json'])('%s has no lint errors, and no warnings but the unrouted answers', async (url) => {
    const res = await t.app.inject({ url });
    expect(res.statusCode).toBe(200);
    const { errors, warnings } = await lint(res.body);
    expect(errors).toEqual([]);
    expect(warnings).toEqual(unroutedAnswers);
  });
});
