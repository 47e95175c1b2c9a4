import { camelName, pascalName, takesNumber } from '../../src/web/site/sdk-names.ts';
import { isObject, ndjsonLine, type ApiModel, type Json, type Operation, type Parameter, type Schema } from './openapi-model.ts';

/**
 * Writes the TypeScript SDK's generated part: `src/generated/types.ts` (a type per component
 * schema and per operation's parameters, body and answer) and `src/generated/client.ts` (a method
 * per operation, an `iter...` method per cursor-paged one). Transport, retries, errors, paging and
 * the webhook check are the hand-written files beside them.
 */

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** A single-quoted string literal, as the repository writes them. */
const quote = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
const key = (name: string): string => (IDENTIFIER.test(name) ? name : quote(name));
const literal = (value: unknown): string => (typeof value === 'string' ? quote(value) : JSON.stringify(value));

/** A JSDoc block at an indent, or nothing for no text. */
export function jsDoc(text: string, indent: string): string {
  const body = text.trim().replace(/\*\//g, '*\\/');
  if (!body) return '';
  const lines = body.split('\n');
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((line) => `${indent} *${line ? ` ${line}` : ''}`).join('\n')}\n${indent} */\n`;
}

const typeName = (ref: string): string => pascalName(ref.split('/').at(-1)!);

const union = (types: string[]): string => {
  const unique = [...new Set(types)];
  if (unique.includes('unknown')) return 'unknown';
  return unique.length === 0 ? 'never' : unique.join(' | ');
};
const wrap = (type: string): string => (/[|&]/.test(type) && !/^[{(]/.test(type) ? `(${type})` : type);

function objectType(schema: Json, indent: string, optionalAll = false): string {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  const inner = `${indent}  `;
  const lines: string[] = [];
  for (const [name, property] of Object.entries(properties)) {
    const description = isObject(property) && typeof property.description === 'string' ? property.description : '';
    if (property === false) {
      lines.push(`${inner}${key(name)}?: never;`);
      continue;
    }
    const optional = optionalAll || !required.includes(name) ? '?' : '';
    lines.push(`${jsDoc(description, inner)}${inner}${key(name)}${optional}: ${tsType(property as Schema, inner)};`);
  }
  for (const name of required) {
    if (typeof name === 'string' && !(name in properties)) lines.push(`${inner}${key(name)}: unknown;`);
  }
  // TypeBox's Record writes `patternProperties`: a map whose keys follow a pattern, typed like additionalProperties.
  const patterned = isObject(schema.patternProperties) ? Object.values(schema.patternProperties)[0] : undefined;
  const extra = schema.additionalProperties ?? patterned;
  const rest = extra === undefined || extra === false ? null : extra === true ? 'unknown' : tsType(extra as Schema, inner);
  if (lines.length === 0) return rest ? `{ [key: string]: ${rest} }` : schema.additionalProperties === false ? 'Record<string, never>' : '{ [key: string]: unknown }';
  const body = `{\n${lines.join('\n')}\n${indent}}`;
  return rest ? `${body} & { [key: string]: ${rest} }` : body;
}

/** One variant of a `oneOf` beside `properties`: the keys it requires (typed from the parent) and those it forbids. */
function variantType(variant: Schema, parent: Json, indent: string): string {
  if (!isObject(variant) || variant.type !== undefined || variant.$ref !== undefined) return tsType(variant, indent);
  const parentProperties = isObject(parent.properties) ? parent.properties : {};
  const own = isObject(variant.properties) ? variant.properties : {};
  const required = Array.isArray(variant.required) ? variant.required.filter((name): name is string => typeof name === 'string') : [];
  const merged: Json = { type: 'object', required, properties: {} };
  const properties = merged.properties as Json;
  for (const name of required) properties[name] = own[name] ?? parentProperties[name] ?? true;
  for (const [name, property] of Object.entries(own)) if (!(name in properties)) properties[name] = property;
  return objectType(merged, indent);
}

/** The TypeScript type of a JSON Schema, written at an indent. */
export function tsType(schema: Schema | null | undefined, indent = ''): string {
  if (schema === undefined || schema === null || schema === true) return 'unknown';
  if (schema === false) return 'never';
  if (typeof schema.$ref === 'string') return typeName(schema.$ref);
  if ('const' in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map(literal));
  const variants = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : null;
  if (variants && isObject(schema.properties)) {
    return `${objectType(schema, indent, true)} & (${variants.map((variant) => variantType(variant as Schema, schema, indent)).join(' | ')})`;
  }
  if (variants) return union(variants.map((variant) => wrap(tsType(variant as Schema, indent))));
  if (Array.isArray(schema.allOf)) return schema.allOf.map((part) => wrap(tsType(part as Schema, indent))).join(' & ');
  if (Array.isArray(schema.type)) return union(schema.type.map((type) => tsType({ ...schema, type }, indent)));
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `Array<${tsType(schema.items as Schema | undefined, indent)}>`;
    case 'object':
      return objectType(schema, indent);
    default:
      return isObject(schema.properties) || isObject(schema.patternProperties) ? objectType(schema, indent) : 'unknown';
  }
}

/** The key a parameter has in a method's `params`: the wire name for path and query, camelCase for headers. */
export function parameterKey(parameter: Parameter): string {
  return parameter.in === 'header' ? camelName(parameter.name) : parameter.name;
}

function parameterType(parameter: Parameter): string {
  return takesNumber(parameter.schema) ? 'number | string' : tsType(parameter.schema, '  ');
}

const typesOf = (operation: Operation) => {
  const base = pascalName(operation.name);
  return { params: `${base}Params`, body: `${base}Body`, response: `${base}Response`, item: `${base}Item` };
};

function successType(operation: Operation): string {
  const types = operation.success.map((answer) => {
    if (answer.kind === 'empty') return 'void';
    if (answer.kind === 'text') return 'string';
    if (answer.kind === 'ndjson') {
      return `Array<${tsType(ndjsonLine(answer.schema))}>`;
    }
    return tsType(answer.schema);
  });
  return types.length === 0 ? 'unknown' : union(types);
}

const HEADER = (model: ApiModel) =>
  `// Generated by sdks/generate.ts from the customers' OpenAPI document (${model.title} ${model.version}).\n` +
  '// Do not edit: change the service, then run `npm run sdks:generate`.\n';

function operationLine(operation: Operation): string {
  return `\`${operation.method} ${operation.path}\``;
}

export function typesFile(model: ApiModel): string {
  let out = `${HEADER(model)}\n`;
  out += jsDoc("The `code` of an error body: a closed set (docs/api.md lists each with what to do). A 401's body has none.", '');
  out += `export type ErrorCode = ${union(model.errorCodes.map(literal))};\n`;
  for (const [name, schema] of Object.entries(model.schemas)) {
    const description = isObject(schema) && typeof schema.description === 'string' ? schema.description : '';
    out += `\n${jsDoc(description, '')}export type ${pascalName(name)} = ${tsType(schema)};\n`;
  }
  for (const operation of model.operations) {
    const names = typesOf(operation);
    out += `\n${jsDoc(`What ${operationLine(operation)} (\`${operation.name}\`) takes beside its body: path, query and header parameters.`, '')}`;
    const lines = operation.parameters.map(
      (parameter) => `${jsDoc(parameter.description, '  ')}  ${key(parameterKey(parameter))}${parameter.required ? '' : '?'}: ${parameterType(parameter)};`,
    );
    out += lines.length ? `export interface ${names.params} {\n${lines.join('\n')}\n}\n` : `export type ${names.params} = Record<string, never>;\n`;
    if (operation.body) {
      out += `\n${jsDoc(`The JSON body of ${operationLine(operation)}.`, '')}export type ${names.body} = ${operation.body.json === null ? 'never' : tsType(operation.body.json)};\n`;
    }
    out += `\n${jsDoc(`What ${operationLine(operation)} answers on success (${operation.success.map((answer) => answer.status).join(', ')}).`, '')}`;
    out += `export type ${names.response} = ${successType(operation)};\n`;
    if (operation.paging) {
      out += `\n${jsDoc(`One item of a page of ${operationLine(operation)} (its \`${operation.paging.itemsField}\`).`, '')}`;
      out += `export type ${names.item} = ${tsType(operation.paging.itemSchema)};\n`;
    }
  }
  return out;
}

function methodDoc(operation: Operation): string {
  const parts = [operation.summary, operation.description, `${operationLine(operation)}; errors: ${operation.errorStatuses.join(', ')} (thrown as a VinhistoryApiError).`];
  if (operation.counted) {
    parts.push('Counted against the quota: retried on 429 and 503 only when an `idempotencyKey` is given (or `retry: true`), so that a retry is never counted twice.');
  }
  return jsDoc(parts.filter(Boolean).join('\n\n'), '  ');
}

function callSpec(operation: Operation, hasParams: boolean): string {
  const byIn = (where: Parameter['in']) => operation.parameters.filter((parameter) => parameter.in === where);
  const entries = (where: Parameter['in']) =>
    `{ ${byIn(where)
      .map((parameter) => `${key(parameter.name)}: params.${IDENTIFIER.test(parameterKey(parameter)) ? parameterKey(parameter) : `[${literal(parameterKey(parameter))}]`}`)
      .join(', ')} }`;
  const fields = [`method: ${literal(operation.method)}`, `path: ${literal(operation.path)}`];
  if (hasParams && byIn('path').length) fields.push(`pathParams: ${entries('path')}`);
  if (hasParams && byIn('query').length) fields.push(`query: ${entries('query')}`);
  if (hasParams && byIn('header').length) fields.push(`headers: ${entries('header')}`);
  if (operation.body) {
    fields.push('body');
    if (operation.body.textMediaType) fields.push(`textMediaType: ${literal(operation.body.textMediaType)}`);
  }
  const answer = operation.success.find((candidate) => candidate.kind !== 'empty')?.kind ?? 'empty';
  fields.push(`counted: ${operation.counted}`, `answer: ${literal(answer)}`);
  return `{ ${fields.join(', ')} }`;
}

export function clientFile(model: ApiModel): string {
  const imports = new Set<string>();
  const methods: string[] = [];
  for (const operation of model.operations) {
    const names = typesOf(operation);
    const hasParams = operation.parameters.length > 0;
    const paramsRequired = operation.parameters.some((parameter) => parameter.required);
    imports.add(names.response);
    const args: string[] = [];
    if (operation.body) {
      imports.add(names.body);
      const bodyType = operation.body.textMediaType ? `${names.body} | string` : names.body;
      args.push(`body: ${operation.body.json === null ? 'string' : bodyType}`);
    }
    if (hasParams) {
      imports.add(names.params);
      args.push(`params: ${names.params}${paramsRequired ? '' : ' = {}'}`);
    }
    args.push('options?: RequestOptions');
    methods.push(
      `${methodDoc(operation)}  ${operation.name}(${args.join(', ')}): Promise<${names.response}> {\n` +
        `    return this.call<${names.response}>(${callSpec(operation, hasParams)}, options);\n  }`,
    );
    if (operation.paging) {
      imports.add(names.item);
      const pageParams = `Omit<${names.params}, 'cursor'>`;
      const call = operation.body ? `this.${operation.name}(body, { ...params, cursor }, options)` : `this.${operation.name}({ ...params, cursor }, options)`;
      methods.push(
        jsDoc(
          `Every item of ${operationLine(operation)}, page after page (each page one request, following \`next_cursor\`).${operation.counted ? ' Each page is a counted call.' : ''}`,
          '  ',
        ) +
          `  ${camelName(`iter ${operation.name}`)}(${operation.body ? `body: ${names.body}, ` : ''}params: ${pageParams}${paramsRequired ? '' : ' = {}'}, options?: RequestOptions): AsyncGenerator<${names.item}> {\n` +
          `    return paginate((cursor) => ${call}, (page) => page.${operation.paging.itemsField});\n  }`,
      );
    }
  }
  const usesPaging = model.operations.some((operation) => operation.paging);
  return (
    `${HEADER(model)}import { ClientCore, type RequestOptions } from '../core.ts';\n` +
    (usesPaging ? "import { paginate } from '../paging.ts';\n" : '') +
    `import type {\n${[...imports].sort().map((name) => `  ${name},`).join('\n')}\n} from './types.ts';\n\n` +
    jsDoc(`The ${model.title}: one method per operation of its OpenAPI document. Construct it with a token and the service's base URL.`, '') +
    `export class Vinhistory extends ClientCore {\n${methods.join('\n\n')}\n}\n`
  );
}
