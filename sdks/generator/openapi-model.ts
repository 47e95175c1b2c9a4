import { pythonMethodName, sdkMethodName } from '../../src/web/site/sdk-names.ts';

/**
 * The customers' OpenAPI document read into what both SDK writers need: the operations with their
 * parameters, bodies and success answers, the component schemas, and the error codes. Only
 * the document is read, so an endpoint added to the service reaches the SDKs by regenerating.
 */

export type Json = { [key: string]: unknown };
/** A JSON Schema as OpenAPI 3.1 holds it: an object, or `true`/`false`. */
export type Schema = Json | boolean;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export interface Parameter {
  /** The name on the wire: `lot_id`, `idempotency-key`. */
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
  description: string;
}

export type AnswerKind = 'json' | 'ndjson' | 'text' | 'empty';

export interface Answer {
  status: string;
  kind: AnswerKind;
  /** The media type read (`application/json`, `text/csv`), null for an empty answer. */
  mediaType: string | null;
  schema: Schema | null;
  description: string;
}

export interface RequestBody {
  required: boolean;
  /** The JSON body's schema, when the operation takes JSON. */
  json: Schema | null;
  /** Another media type it takes as text (`text/csv`), sent when the body given is a string. */
  textMediaType: string | null;
}

export interface Operation {
  /** The TypeScript method name (`listWatches`); `pythonName` is the Python one. */
  name: string;
  pythonName: string;
  method: string;
  path: string;
  summary: string;
  description: string;
  tag: string;
  parameters: Parameter[];
  body: RequestBody | null;
  /** The 2xx answers. */
  success: Answer[];
  /** The statuses of its error answers, as the document lists them (`401`, `5XX`). */
  errorStatuses: string[];
  /**
   * Counted against the quota: the operation takes an `Idempotency-Key` (the contract gives every
   * counted call one, and no free call has one), so a retry without a key could count twice.
   */
  counted: boolean;
  /** Cursor paging: the page's list field and its item schema, when the operation pages. */
  paging: { itemsField: string; itemSchema: Schema } | null;
}

export interface ApiModel {
  title: string;
  version: string;
  operations: Operation[];
  schemas: Record<string, Schema>;
  errorCodes: string[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Follows a `#/components/schemas/X` reference (once: component schemas refer on by name). */
export function resolve(schema: Schema | null | undefined, schemas: Record<string, Schema>): Schema | null {
  if (schema === null || schema === undefined) return null;
  if (isObject(schema) && typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').at(-1)!;
    return schemas[name] ?? null;
  }
  return schema;
}

function answerOf(status: string, raw: unknown): Answer {
  const response = isObject(raw) ? raw : {};
  const content = isObject(response.content) ? response.content : {};
  const types = Object.keys(content);
  const pick = (mediaType: string): Schema | null => {
    const entry = content[mediaType];
    return isObject(entry) && (isObject(entry.schema) || typeof entry.schema === 'boolean') ? entry.schema : null;
  };
  const json = types.find((type) => type === 'application/json' || /\+json$/.test(type));
  const ndjson = types.find((type) => type === 'application/x-ndjson' || type === 'application/jsonl');
  const description = text(response.description);
  if (json) return { status, kind: 'json', mediaType: json, schema: pick(json), description };
  if (ndjson) return { status, kind: 'ndjson', mediaType: ndjson, schema: pick(ndjson), description };
  if (types[0]) return { status, kind: 'text', mediaType: types[0], schema: pick(types[0]), description };
  return { status, kind: 'empty', mediaType: null, schema: null, description };
}

function bodyOf(raw: unknown): RequestBody | null {
  if (!isObject(raw) || !isObject(raw.content)) return null;
  const content = raw.content;
  const types = Object.keys(content);
  const jsonType = types.find((type) => type === 'application/json');
  const jsonEntry = jsonType ? content[jsonType] : undefined;
  const json = isObject(jsonEntry) && (isObject(jsonEntry.schema) || typeof jsonEntry.schema === 'boolean') ? jsonEntry.schema : jsonType ? true : null;
  const textMediaType = types.find((type) => type !== 'application/json') ?? null;
  return { required: raw.required === true, json, textMediaType };
}

function pagingOf(parameters: Parameter[], success: Answer[], schemas: Record<string, Schema>): Operation['paging'] {
  if (!parameters.some((parameter) => parameter.in === 'query' && parameter.name === 'cursor')) return null;
  const page = resolve(success.find((answer) => answer.kind === 'json')?.schema, schemas);
  if (!isObject(page) || !isObject(page.properties) || !('next_cursor' in page.properties)) return null;
  const lists = Object.entries(page.properties).filter(([, property]) => isObject(property) && property.type === 'array');
  if (lists.length !== 1) return null;
  const [itemsField, list] = lists[0]!;
  const items = (list as Json).items;
  return { itemsField, itemSchema: isObject(items) || typeof items === 'boolean' ? items : true };
}

/** Reads the customers' document. Throws, naming the operation, on what the SDKs cannot express. */
export function readModel(document: Json): ApiModel {
  const info = isObject(document.info) ? document.info : {};
  const components = isObject(document.components) ? document.components : {};
  const schemas = (isObject(components.schemas) ? components.schemas : {}) as Record<string, Schema>;
  const operations: Operation[] = [];
  const paths = isObject(document.paths) ? document.paths : {};
  for (const path of Object.keys(paths).sort()) {
    const item = paths[path];
    if (!isObject(item)) continue;
    const shared: unknown[] = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of METHODS) {
      const raw = item[method];
      if (!isObject(raw)) continue;
      const parameters: Parameter[] = [...shared, ...(Array.isArray(raw.parameters) ? (raw.parameters as unknown[]) : [])].filter(isObject).flatMap((parameter) => {
        const where = parameter.in;
        if (where !== 'path' && where !== 'query' && where !== 'header') return [];
        // The token goes in every request through the client; a document never lists it as a parameter.
        if (where === 'header' && text(parameter.name).toLowerCase() === 'authorization') return [];
        return [{
          name: text(parameter.name),
          in: where,
          required: where === 'path' || parameter.required === true,
          schema: isObject(parameter.schema) || typeof parameter.schema === 'boolean' ? parameter.schema : true,
          description: text(parameter.description),
        }];
      });
      const responses = isObject(raw.responses) ? raw.responses : {};
      const success = Object.entries(responses).filter(([status]) => /^2/.test(status)).map(([status, response]) => answerOf(status, response));
      const identity = { operationId: raw.operationId, method: method.toUpperCase(), path };
      operations.push({
        name: sdkMethodName(identity),
        pythonName: pythonMethodName(identity),
        method: method.toUpperCase(),
        path,
        summary: text(raw.summary),
        description: text(raw.description),
        tag: Array.isArray(raw.tags) ? text(raw.tags[0]) : '',
        parameters,
        body: bodyOf(raw.requestBody),
        success,
        errorStatuses: Object.keys(responses).filter((status) => !/^2/.test(status)),
        counted: parameters.some((parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key'),
        paging: pagingOf(parameters, success, schemas),
      });
    }
  }
  const names = new Map<string, string>();
  for (const operation of operations) {
    const other = names.get(operation.name);
    if (other) throw new Error(`${operation.method} ${operation.path} and ${other} would both be the SDK method ${operation.name}: give them distinct operationIds`);
    names.set(operation.name, `${operation.method} ${operation.path}`);
  }
  const error = resolve(schemas.Error, schemas);
  const code = isObject(error) && isObject(error.properties) ? error.properties.code : null;
  const errorCodes = isObject(code) && Array.isArray(code.enum) ? code.enum.filter((value): value is string => typeof value === 'string') : [];
  return { title: text(info.title), version: text(info.version), operations, schemas, errorCodes };
}

/**
 * The schema of one line of an NDJSON answer: the items of an array schema, the schema itself when
 * it describes a value, and a JSON object when the document describes only the text (`type:
 * string`, "one JSON object per line"), as NDJSON answers here are.
 */
export function ndjsonLine(schema: Schema | null): Schema {
  if (isObject(schema) && schema.type === 'array') return isObject(schema.items) || typeof schema.items === 'boolean' ? schema.items : true;
  if (schema === null || schema === true || (isObject(schema) && (schema.type === 'string' || Object.keys(schema).every((key) => key === 'description')))) {
    return { type: 'object', additionalProperties: true };
  }
  return schema;
}
