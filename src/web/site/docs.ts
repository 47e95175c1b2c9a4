import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { renderInlineMarkdown, renderMarkdown } from '../markdown.ts';
import { pythonSample, typescriptSample, type SampleOperation } from './sdk-samples.ts';

type Json = { [key: string]: unknown };
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export interface ReferenceParameter {
  name: string;
  where: 'path' | 'query' | 'header' | 'body';
  required: boolean;
  type: string;
  html: string;
  example: string | null;
}

export interface CodeSample {
  language: string;
  code: string;
}

export interface ReferenceOperation {
  id: string;
  method: string;
  path: string;
  summary: string;
  html: string;
  parameters: ReferenceParameter[];
  responses: { status: string; html: string }[];
  samples: CodeSample[];
}

export interface ReferenceSchema {
  name: string;
  html: string;
  fields: { name: string; type: string; required: boolean; html: string }[];
}

export interface Reference {
  title: string;
  html: string;
  sections: { name: string; html: string; operations: ReferenceOperation[] }[];
  schemas: ReferenceSchema[];
}

function typeOf(schema: unknown): string {
  if (!isObject(schema)) return '';
  if (typeof schema.$ref === 'string') return schema.$ref.split('/').at(-1)!;
  if (Array.isArray(schema.anyOf)) return schema.anyOf.map(typeOf).filter(Boolean).join(' or ');
  if (Array.isArray(schema.oneOf)) return schema.oneOf.map(typeOf).filter(Boolean).join(' or ');
  if (Array.isArray(schema.type)) return schema.type.join(' or ');
  if (schema.type === 'array') return `array of ${typeOf(schema.items) || 'values'}`;
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(', ');
  if ('const' in schema) return JSON.stringify(schema.const);
  return text(schema.type);
}

function exampleOf(schema: unknown): string | null {
  if (!isObject(schema)) return null;
  const examples = Array.isArray(schema.examples) ? schema.examples : schema.example !== undefined ? [schema.example] : [];
  return typeof examples[0] === 'string' ? examples[0] : null;
}

/**
 * The four samples of an operation: curl, the TypeScript and Python SDKs (sdks/, their calls
 * written by sdk-samples.ts from the names the SDKs' generator gives) and PHP (curl extension).
 */
export function codeSamples(baseUrl: string, operation: SampleOperation, query: Record<string, string>): CodeSample[] {
  const { method, body } = operation;
  // Path parameters go into the path (their examples, or the {name} left for the reader), never the query.
  const inPath = operation.parameters.filter((parameter) => parameter.in === 'path');
  const path = inPath.reduce((filled, parameter) => (parameter.example ? filled.replace(`{${parameter.name}}`, encodeURIComponent(parameter.example)) : filled), operation.path);
  const search = new URLSearchParams(Object.entries(query).filter(([name]) => !inPath.some((parameter) => parameter.name === name))).toString();
  const url = `${baseUrl}${path}${search ? `?${search}` : ''}`;
  const upper = method.toUpperCase();
  const json = body ? JSON.stringify(body) : null;
  const curl = [
    `curl${upper === 'GET' ? '' : ` -X ${upper}`} "${url}" \\`,
    `  -H "Authorization: $VINHISTORY_TOKEN"${json ? ' \\' : ''}`,
    ...(json ? [`  -H "Content-Type: application/json" \\`, `  -d '${json}'`] : []),
  ].join('\n');
  const php = [
    '<?php',
    `$curl = curl_init('${url}');`,
    'curl_setopt_array($curl, [',
    '    CURLOPT_RETURNTRANSFER => true,',
    ...(upper === 'GET' ? [] : [`    CURLOPT_CUSTOMREQUEST => '${upper}',`]),
    `    CURLOPT_HTTPHEADER => ['Authorization: ' . getenv('VINHISTORY_TOKEN')${json ? ", 'Content-Type: application/json'" : ''}],`,
    ...(json ? [`    CURLOPT_POSTFIELDS => ${phpBody(body!, json)},`] : []),
    ']);',
    '$body = curl_exec($curl);',
    '$status = curl_getinfo($curl, CURLINFO_HTTP_CODE);',
    'var_dump($status, json_decode($body, true));',
  ].join('\n');
  return [
    { language: 'curl', code: curl },
    { language: 'TypeScript', code: typescriptSample(baseUrl, operation) },
    { language: 'Python', code: pythonSample(baseUrl, operation) },
    { language: 'PHP', code: php },
  ];
}

/** A flat body as a PHP array through json_encode; a nested one as its JSON text. */
function phpBody(values: Record<string, unknown>, json: string): string {
  const quote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const entries = Object.entries(values);
  if (!entries.every(([, value]) => typeof value === 'string')) return quote(json);
  return `json_encode([${entries.map(([key, value]) => `${quote(key)} => ${quote(value as string)}`).join(', ')}])`;
}

/**
 * A sample value for a schema, for the samples' bodies: the document's example, else one made
 * from the schema (an object's required fields, or where it requires none by itself, as a watch
 * by VIN or by lot, its first variant's, else its first field with an example, else its first; an array of one; a
 * placeholder naming a string), so that every call shown is one the SDKs' types take.
 */
function exampleValue(schema: unknown, name: string, schemas: Json, depth = 0): unknown {
  if (!isObject(schema) || depth > 6) return `<${name}>`;
  if (typeof schema.$ref === 'string') return exampleValue(schemas[schema.$ref.split('/').at(-1)!], name, schemas, depth + 1);
  const examples = Array.isArray(schema.examples) ? schema.examples : schema.example !== undefined ? [schema.example] : [];
  if (examples.length) return examples[0];
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  const variants = (Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : []).filter(isObject);
  const properties = isObject(schema.properties) ? schema.properties : null;
  if (variants.length && !properties) return exampleValue(variants.find((variant) => variant.type !== 'null') ?? variants[0], name, schemas, depth + 1);
  if (schema.type === 'array') return [exampleValue(schema.items, name, schemas, depth + 1)];
  if (schema.type === 'integer' || schema.type === 'number') return typeof schema.minimum === 'number' ? Math.max(schema.minimum, 1) : 1;
  if (schema.type === 'boolean') return false;
  if (properties) {
    let required = Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string') : [];
    if (!required.length && variants[0] && Array.isArray(variants[0].required)) required = variants[0].required.filter((key): key is string => typeof key === 'string');
    if (!required.length) {
      const first = Object.entries(properties).find(([, property]) => exampleOf(property) !== null) ?? Object.entries(properties)[0];
      required = first ? [first[0]] : [];
    }
    return Object.fromEntries(required.map((key) => [key, exampleValue(properties[key], key, schemas, depth + 1)]));
  }
  return `<${name}>`;
}

/**
 * The customers' OpenAPI document as the /docs page shows it: each operation with its
 * parameters, its answers, and ready-to-run samples against the service's public address.
 */
export function presentReference(document: Json, baseUrl: string): Reference {
  const info = isObject(document.info) ? document.info : {};
  const tags = Array.isArray(document.tags) ? document.tags.filter(isObject) : [];
  const paths = isObject(document.paths) ? document.paths : {};
  const schemas = isObject(document.components) && isObject(document.components.schemas) ? document.components.schemas : {};
  const operations: (ReferenceOperation & { tag: string })[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const [method, raw] of Object.entries(item)) {
      if (!isObject(raw)) continue;
      const parameters: ReferenceParameter[] = (Array.isArray(raw.parameters) ? raw.parameters.filter(isObject) : []).map((parameter) => ({
        name: text(parameter.name),
        where: parameter.in === 'header' ? 'header' : parameter.in === 'path' ? 'path' : 'query',
        required: parameter.required === true,
        type: typeOf(parameter.schema),
        html: renderInlineMarkdown(text(parameter.description)),
        // OpenAPI puts a parameter's example beside its schema; a body property's sits in the schema.
        example: exampleOf(parameter) ?? exampleOf(parameter.schema),
      }));
      const body = isObject(raw.requestBody) && isObject(raw.requestBody.content) ? raw.requestBody.content['application/json'] : undefined;
      const bodySchema = isObject(body) && isObject(body.schema) ? body.schema : null;
      if (bodySchema && isObject(bodySchema.properties)) {
        const required = Array.isArray(bodySchema.required) ? bodySchema.required : [];
        for (const [name, property] of Object.entries(bodySchema.properties)) {
          parameters.push({ name, where: 'body', required: required.includes(name), type: typeOf(property), html: renderInlineMarkdown(text(isObject(property) ? property.description : '')), example: exampleOf(property) });
        }
      }
      const query = Object.fromEntries(parameters.filter((p) => p.where === 'query' && p.required && p.example).map((p) => [p.name, p.example!]));
      const responses = isObject(raw.responses) ? raw.responses : {};
      operations.push({
        tag: Array.isArray(raw.tags) ? text(raw.tags[0]) : '',
        id: text(raw.operationId) || `${method}-${path}`.replace(/[^a-z0-9]+/gi, '-'),
        method: method.toUpperCase(),
        path,
        summary: text(raw.summary),
        html: renderMarkdown(text(raw.description)),
        parameters,
        responses: Object.entries(responses).map(([status, response]) => ({ status, html: renderInlineMarkdown(text(isObject(response) ? response.description : '')) })),
        samples: codeSamples(
          baseUrl,
          {
            operationId: raw.operationId,
            method,
            path,
            parameters: (Array.isArray(raw.parameters) ? raw.parameters.filter(isObject) : [])
              .filter((parameter) => parameter.in === 'path' || (parameter.in === 'query' && parameter.required === true))
              .map((parameter) => ({ name: text(parameter.name), in: parameter.in === 'path' ? 'path' : 'query', schema: parameter.schema, example: exampleOf(parameter) ?? exampleOf(parameter.schema) })),
            body: bodySchema ? (exampleValue(bodySchema, 'body', schemas) as Record<string, unknown>) : null,
            answersBody: Object.entries(responses).some(([status, response]) => status.startsWith('2') && isObject(response) && isObject(response.content)),
          },
          query,
        ),
      });
    }
  }
  const components = isObject(document.components) && isObject(document.components.schemas) ? document.components.schemas : {};
  return {
    title: text(info.title),
    html: renderMarkdown(text(info.description)),
    sections: tags.map((tag) => ({
      name: text(tag.name),
      html: renderInlineMarkdown(text(tag.description)),
      operations: operations.filter((operation) => operation.tag === tag.name),
    })),
    schemas: Object.entries(components)
      .filter(([, schema]) => isObject(schema))
      .map(([name, raw]) => {
        const schema = raw as Json;
        const required = Array.isArray(schema.required) ? schema.required : [];
        const properties = isObject(schema.properties) ? schema.properties : {};
        return {
          name,
          html: renderInlineMarkdown(text(schema.description)),
          fields: Object.entries(properties).map(([field, property]) => ({
            name: field,
            type: typeOf(property),
            required: required.includes(field),
            html: renderInlineMarkdown(text(isObject(property) ? property.description : '')),
          })),
        };
      }),
  };
}

/**
 * /docs: the customers' API reference in the site's own layout, rendered on the server from the
 * same OpenAPI document as /api/v1/openapi.json (customer operations only), with samples in four
 * languages and a "try it" form whose script (assets/docs.js) calls the API on the host the page
 * was opened on. docs/decisions.md says why not a third-party renderer.
 */
const docsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config } = app.services;
  let reference: Reference | null = null;
  app.get('/docs', { schema: { hide: true } }, async (_request, reply) => {
    reference ??= presentReference(app.customerOpenApi(), config.publicBaseUrl);
    return reply.page('docs', { title: 'API reference', section: 'docs', indexable: true, reference, docsScript: true });
  });
  app.get('/docs/', { schema: { hide: true } }, async (_request, reply) => reply.seeOther('/docs'));
  // The document itself, where Swagger UI served it (links and tools may point here).
  app.get('/docs/json', { schema: { hide: true } }, async () => app.customerOpenApi());
};

export default docsRoutes;
