import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driftedFiles } from '../../sdks/generate.ts';
import { generateSdks } from '../../sdks/generator/index.ts';
import { ndjsonLine } from '../../sdks/generator/openapi-model.ts';
import { createTestApp, TEST_BASE_URL, type TestApp } from '../support/app.ts';
import { presentReference } from '../../src/web/site/docs.ts';

/**
 * The SDKs are generated from the customers' OpenAPI document (sdks/generate.ts): the committed
 * files must be what the document makes now, so an endpoint or a schema changed in the service
 * without `npm run sdks:generate` fails here. And an endpoint the generator has not met yet (the
 * shapes the coming catalogue and batches take) comes out as methods without hand edits.
 */
describe('the generated SDKs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(async () => t?.close());

  it('are what the OpenAPI document makes: no drift between the document and either SDK', async () => {
    const document = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
    const files = generateSdks(document);
    expect(driftedFiles(files), 'run npm run sdks:generate').toEqual([]);
    // Every operation has its method in both SDKs.
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, { operationId: string }>>)) {
      for (const [method, operation] of Object.entries(item)) {
        expect(files.get('sdks/typescript/src/generated/client.ts'), `${method} ${path}`).toContain(`path: '${path}'`);
        expect(files.get('sdks/python/vinhistory/_client.py'), `${method} ${path}`).toContain(`path="${path}"`);
        expect(operation.operationId).toBeTruthy();
      }
    }
  });

  it('are what the /docs samples call: every TypeScript and Python sample names a method of its SDK', async () => {
    const document = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
    const files = generateSdks(document);
    const operations = presentReference(document, TEST_BASE_URL).sections.flatMap((section) => section.operations);
    expect(operations.length).toBeGreaterThan(3);
    for (const operation of operations) {
      const typescript = operation.samples.find((sample) => sample.language === 'TypeScript')!.code;
      const python = operation.samples.find((sample) => sample.language === 'Python')!.code;
      const tsMethod = /client\.(\w+)\(/.exec(typescript)![1]!;
      const pyMethod = /client\.(\w+)\(/.exec(python)![1]!;
      expect(files.get('sdks/typescript/src/generated/client.ts'), operation.id).toContain(`\n  ${tsMethod}(`);
      expect(files.get('sdks/python/vinhistory/_client.py'), operation.id).toContain(`    def ${pyMethod}(`);
    }
  });

  it('fails the check when a committed file differs', async () => {
    const document = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
    const files = generateSdks(document);
    files.set('sdks/python/vinhistory/_client.py', `${files.get('sdks/python/vinhistory/_client.py')}\n# drift\n`);
    expect(driftedFiles(files)).toEqual(['sdks/python/vinhistory/_client.py']);
  });

  it('writes methods for endpoints it has not met: cursor paging by another list field, a CSV body, NDJSON results', () => {
    const error = { description: 'An error.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    const document = {
      openapi: '3.1.0',
      info: { title: 'test API', version: '1.0.0' },
      paths: {
        '/api/v1/lots': {
          get: {
            operationId: 'searchLots',
            parameters: [
              { in: 'query', name: 'make', schema: { type: 'string' } },
              { in: 'query', name: 'year_min', schema: { type: 'integer' } },
              { in: 'query', name: 'cursor', schema: { type: 'string' } },
              { in: 'header', name: 'idempotency-key', schema: { type: 'string' } },
            ],
            responses: {
              200: {
                description: 'A page.',
                content: { 'application/json': { schema: { type: 'object', required: ['lots', 'next_cursor'], properties: { lots: { type: 'array', items: { $ref: '#/components/schemas/Lot' } }, next_cursor: { anyOf: [{ type: 'string' }, { type: 'null' }] } } } } },
              },
              422: error,
            },
          },
        },
        '/api/v1/batches': {
          post: {
            requestBody: {
              required: true,
              content: {
                'application/json': { schema: { type: 'object', required: ['items'], properties: { items: { type: 'array', items: { type: 'object', properties: { vin: { type: 'string' } } } } } } },
                'text/csv': { schema: { type: 'string' } },
              },
            },
            parameters: [{ in: 'header', name: 'idempotency-key', schema: { type: 'string' } }],
            responses: {
              202: {
                description: 'Queued.',
                content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' }, counts: { type: 'object', patternProperties: { '^[0-9]{3}$': { type: 'integer' } } } } } } },
              },
              422: error,
            },
          },
        },
        '/api/v1/batches/{id}/results': {
          get: {
            operationId: 'batchResults',
            parameters: [{ in: 'path', name: 'id', required: true, schema: { type: 'string' } }],
            responses: { 200: { description: 'NDJSON.', content: { 'application/x-ndjson': { schema: { type: 'object', properties: { index: { type: 'integer' }, from: { type: 'string' } } } }, 'text/csv': { schema: { type: 'string' } } } } },
          },
        },
      },
      components: {
        schemas: {
          Lot: { type: 'object', required: ['vin'], properties: { vin: { type: 'string' } } },
          Error: { type: 'object', required: ['message'], properties: { code: { type: 'string', enum: ['invalid_request'] }, message: { type: 'string' } } },
        },
      },
    };
    const files = generateSdks(document);
    const client = files.get('sdks/typescript/src/generated/client.ts')!;
    expect(client).toContain('searchLots(params: SearchLotsParams = {}, options?: RequestOptions): Promise<SearchLotsResponse>');
    expect(client).toContain('iterSearchLots(');
    expect(client).toContain('(page) => page.lots');
    expect(client).toContain("postBatches(body: PostBatchesBody | string, params: PostBatchesParams = {}, options?: RequestOptions)");
    expect(client).toContain("textMediaType: 'text/csv', counted: true");
    expect(client).toContain("answer: 'ndjson'");
    // A TypeBox Record (patternProperties) is a map of its values' type.
    expect(files.get('sdks/typescript/src/generated/types.ts')).toContain('counts?: { [key: string]: number };');
    expect(files.get('sdks/python/vinhistory/_types.py')).toContain('counts: NotRequired[Dict[str, int]]');
    for (const [file, text] of files) {
      if (!file.endsWith('.ts')) continue;
      const output = ts.transpileModule(text, { reportDiagnostics: true, compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
      expect(output.diagnostics, file).toEqual([]);
    }
    const python = files.get('sdks/python/vinhistory/_client.py')!;
    expect(python).toContain('def search_lots(self, *, make: Optional[str] = None, year_min: Optional[int] = None, cursor: Optional[str] = None, idempotency_key: Optional[str] = None');
    expect(python).toContain('def iter_search_lots(');
    expect(python).toContain('def post_batches(self, body: Union[PostBatchesBody, str], *');
    expect(python).toContain('def batch_results(self, *, id: str');
    // The /docs samples of such an endpoint send a body its types take, made from the schema.
    const batches = presentReference({ ...document, tags: [{ name: 'Batches' }], paths: { '/api/v1/batches': { post: { ...document.paths['/api/v1/batches'].post, tags: ['Batches'] } } } }, TEST_BASE_URL);
    const codes = Object.fromEntries(batches.sections[0]!.operations[0]!.samples.map((sample) => [sample.language, sample.code]));
    expect(codes.TypeScript).toContain("= await client.postBatches({ items: [{ vin: '<vin>' }] });");
    expect(codes.Python).toContain('client.post_batches({"items": [{"vin": "<vin>"}]})');
    expect(codes.curl).toContain(`-d '{"items":[{"vin":"<vin>"}]}'`);
    // NDJSON described only as text ("one JSON object per line", as the batches' results are) is read as objects.
    expect(ndjsonLine({ type: 'string', description: 'One JSON object per line.' })).toEqual({ type: 'object', additionalProperties: true });
    expect(ndjsonLine({ type: 'array', items: { $ref: '#/components/schemas/Lot' } })).toEqual({ $ref: '#/components/schemas/Lot' });
    // A key that is not a Python name makes the functional TypedDict form.
    expect(files.get('sdks/python/vinhistory/_types.py')).toContain('"from": "NotRequired[str]"');
  });
});
