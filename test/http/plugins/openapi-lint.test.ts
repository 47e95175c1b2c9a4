import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Document, Spectral } from '@stoplight/spectral-core';
import { Json as JsonParser } from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
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

  it.each(['/api/v1/openapi.json', '/admin/v1/openapi.json'])('%s has no lint errors and no warnings (no unused component either)', async (url) => {
    const res = await t.app.inject({ url });
    expect(res.statusCode).toBe(200);
    const { errors, warnings } = await lint(res.body);
    expect(errors).toEqual([]);
    expect(warnings).toEqual([]);
  });
});

/** What Spectral's `spectral:oas` ruleset finds in a served document, as "severity code: message at path". */
async function spectralLint(source: string): Promise<string[]> {
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [oas as never] });
  const results = await spectral.run(new Document(source, JsonParser, 'openapi.json'));
  const severities = ['error', 'warn', 'info', 'hint'];
  return results.map((result) => `${severities[result.severity]} ${String(result.code)}: ${result.message} at ${result.path.join('.')}`);
}

describe('the OpenAPI documents pass Spectral (spectral:oas)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(async () => t?.close());

  it.each(['/api/v1/openapi.json', '/admin/v1/openapi.json'])('%s has no finding at all, unused components included', async (url) => {
    const res = await t.app.inject({ url });
    expect(res.statusCode).toBe(200);
    expect(await spectralLint(res.body)).toEqual([]);
  });
});
