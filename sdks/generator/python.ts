import { pascalName, snakeName, takesNumber } from '../../src/web/site/sdk-names.ts';
import { isObject, ndjsonLine, type ApiModel, type Json, type Operation, type Parameter, type Schema } from './openapi-model.ts';

/**
 * Writes the Python SDK's generated part: `vinhistory/_types.py` (a TypedDict per object schema,
 * named inline ones included) and `vinhistory/_client.py` (the sync and async clients, a method per
 * operation and an `iter_...` per cursor-paged one). Transport, retries, errors and the webhook
 * check are the hand-written modules beside them.
 */

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PYTHON_KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(' '),
);
const str = (value: string): string => JSON.stringify(value);
const pyLiteral = (value: unknown): string => (value === null ? 'None' : value === true ? 'True' : value === false ? 'False' : JSON.stringify(value));

/** A docstring body at an indent (triple quotes escaped). */
function docstring(text: string, indent: string): string {
  const body = text.trim().replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"');
  if (!body) return '';
  const lines = body.split('\n');
  if (lines.length === 1) return `${indent}"""${lines[0]}"""\n`;
  return `${indent}"""${lines[0]}\n${lines.slice(1).map((line) => (line ? `${indent}${line}` : '')).join('\n')}\n${indent}"""\n`;
}

const comment = (text: string, indent: string): string =>
  text
    .trim()
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => `${indent}# ${line.trim()}\n`)
    .join('');

const unionOf = (types: string[]): string => {
  const unique = [...new Set(types)];
  if (unique.includes('Any')) return 'Any';
  const rest = unique.filter((type) => type !== 'None');
  const core = rest.length === 0 ? 'None' : rest.length === 1 ? rest[0]! : `Union[${rest.join(', ')}]`;
  return unique.includes('None') && rest.length > 0 ? `Optional[${core}]` : core;
};

/** Collects the TypedDicts a file needs, each under a unique name, in an order that defines before use where it can. */
class PythonTypes {
  readonly definitions: string[] = [];
  private readonly taken = new Set<string>();

  constructor(private readonly schemas: Record<string, Schema>) {}

  name(wanted: string): string {
    let name = wanted;
    for (let n = 2; this.taken.has(name); n++) name = `${wanted}${n}`;
    this.taken.add(name);
    return name;
  }

  reserve(name: string): void {
    this.taken.add(name);
  }

  /** The Python type of a schema; `context` names the TypedDicts an inline object needs. */
  type(schema: Schema | null | undefined, context: string): string {
    if (schema === undefined || schema === null || schema === true) return 'Any';
    if (schema === false) return 'NoReturn';
    if (typeof schema.$ref === 'string') return pascalName(schema.$ref.split('/').at(-1)!);
    if ('const' in schema) return schema.const === null ? 'None' : `Literal[${pyLiteral(schema.const)}]`;
    if (Array.isArray(schema.enum)) {
      const values = schema.enum.filter((value) => value !== null);
      const literal = values.length ? `Literal[${values.map(pyLiteral).join(', ')}]` : 'None';
      return schema.enum.includes(null) && values.length ? `Optional[${literal}]` : literal;
    }
    const variants = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : null;
    // Either/or fields of one object (a watch by VIN or by lot): one TypedDict, each field optional.
    if (variants && isObject(schema.properties)) return this.typedDict(schema, context, true);
    if (variants) return unionOf(variants.map((variant, i) => this.type(variant as Schema, `${context}${i + 1}`)));
    if (Array.isArray(schema.allOf)) return this.allOf(schema.allOf as Schema[], context, typeof schema.description === 'string' ? schema.description : '');
    if (Array.isArray(schema.type)) return unionOf(schema.type.map((type) => this.type({ ...schema, type }, context)));
    switch (schema.type) {
      case 'string':
        return 'str';
      case 'integer':
        return 'int';
      case 'number':
        return 'float';
      case 'boolean':
        return 'bool';
      case 'null':
        return 'None';
      case 'array':
        return `List[${this.type(schema.items as Schema | undefined, `${context}Item`)}]`;
      default:
        if (isObject(schema.properties) && Object.keys(schema.properties).length > 0) return this.typedDict(schema, context, false);
        if (schema.type === 'object' || isObject(schema.additionalProperties) || isObject(schema.patternProperties)) {
          // TypeBox's Record writes `patternProperties`: a map whose keys follow a pattern.
          const extra = schema.additionalProperties ?? (isObject(schema.patternProperties) ? Object.values(schema.patternProperties)[0] : undefined);
          return `Dict[str, ${isObject(extra) ? this.type(extra, `${context}Value`) : 'Any'}]`;
        }
        return 'Any';
    }
  }

  private allOf(parts: Schema[], context: string, description: string): string {
    const bases = parts.filter((part) => isObject(part) && typeof part.$ref === 'string').map((part) => this.type(part, context));
    const inline = parts.filter((part) => !(isObject(part) && typeof part.$ref === 'string'));
    if (inline.length === 0 && bases.length === 1) return bases[0]!;
    const merged: Json = { type: 'object', properties: {}, required: [], description };
    for (const part of inline) {
      if (!isObject(part)) continue;
      Object.assign(merged.properties as Json, isObject(part.properties) ? part.properties : {});
      (merged.required as unknown[]).push(...(Array.isArray(part.required) ? (part.required as unknown[]) : []));
    }
    return this.typedDict(merged, context, false, bases);
  }

  /** Defines a TypedDict for an object schema and answers its name. */
  typedDict(schema: Json, context: string, allOptional: boolean, bases: string[] = [], fixedName?: string): string {
    const name = fixedName ?? this.name(context);
    const properties = isObject(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required) ? schema.required : [];
    const fields: { key: string; type: string; description: string }[] = [];
    for (const [key, property] of Object.entries(properties)) {
      if (property === false) continue;
      const type = this.type(property as Schema, `${name}${pascalName(key)}`);
      const optional = allOptional || !required.includes(key);
      fields.push({ key, type: optional ? `NotRequired[${type}]` : type, description: isObject(property) && typeof property.description === 'string' ? property.description : '' });
    }
    const description = typeof schema.description === 'string' ? schema.description : '';
    const classSyntax = fields.every((field) => IDENTIFIER.test(field.key) && !PYTHON_KEYWORDS.has(field.key));
    let out: string;
    if (classSyntax) {
      out = `class ${name}(${bases.length ? bases.join(', ') : 'TypedDict'}):\n${docstring(description, '    ')}`;
      out += fields.map((field) => `${comment(field.description, '    ')}    ${field.key}: ${field.type}\n`).join('');
      if (!description && fields.length === 0) out += '    pass\n';
    } else {
      // Keys that are not Python names (`from`, `200`): the functional form, types as strings so that order does not matter.
      out = `${comment(description, '')}${name} = TypedDict(\n    ${str(name)},\n    {\n${fields.map((field) => `${comment(field.description, '        ')}        ${str(field.key)}: ${str(field.type)},\n`).join('')}    },\n)\n`;
      if (bases.length) throw new Error(`${name}: an allOf with keys that are not Python names is not supported`);
    }
    this.definitions.push(out);
    return name;
  }
}

const HEADER = (model: ApiModel) =>
  `# Generated by sdks/generate.ts from the customers' OpenAPI document (${model.title} ${model.version}).\n` +
  '# Do not edit: change the service, then run `npm run sdks:generate`.\n';

const typeNames = (operation: Operation) => {
  const base = pascalName(operation.name);
  return { body: `${base}Body`, response: `${base}Response`, item: `${base}Item` };
};

export function pythonParameterName(parameter: Parameter): string {
  return snakeName(parameter.name);
}

function parameterType(types: PythonTypes, parameter: Parameter, operation: Operation): string {
  if (takesNumber(parameter.schema)) return 'Union[int, str]';
  return types.type(parameter.schema, `${pascalName(operation.name)}${pascalName(parameter.name)}`);
}

interface Rendered {
  types: string;
  client: string;
}

function successType(types: PythonTypes, operation: Operation): string {
  const names = typeNames(operation);
  const all = operation.success.map((answer) => {
    if (answer.kind === 'empty') return 'None';
    if (answer.kind === 'text') return 'str';
    if (answer.kind === 'ndjson') {
      return `List[${types.type(ndjsonLine(answer.schema), `${names.response}Line`)}]`;
    }
    return types.type(answer.schema, `${names.response}${operation.success.length > 1 ? answer.status : ''}`);
  });
  return all.length === 0 ? 'Any' : unionOf(all);
}

function methodDoc(operation: Operation): string {
  const parts = [operation.summary, operation.description, `${operation.method} ${operation.path}; errors: ${operation.errorStatuses.join(', ')} (raised as VinhistoryApiError).`];
  if (operation.counted) {
    parts.push('Counted against the quota: retried on 429 and 503 only when an idempotency_key is given (or retry=True in options), so that a retry is never counted twice.');
  }
  return docstring(parts.filter(Boolean).join('\n\n'), '        ');
}

export function renderPython(model: ApiModel): Rendered {
  const types = new PythonTypes(model.schemas);
  for (const name of Object.keys(model.schemas)) types.reserve(pascalName(name));
  for (const [name, schema] of Object.entries(model.schemas)) {
    const typeName = pascalName(name);
    if (isObject(schema) && isObject(schema.properties) && !Array.isArray(schema.allOf) && !Array.isArray(schema.oneOf) && !Array.isArray(schema.anyOf)) {
      types.typedDict(schema, typeName, false, [], typeName);
    } else {
      types.definitions.push(`${typeName}: TypeAlias = ${types.type(schema, `${typeName}Value`)}\n`);
    }
  }
  const aliases: string[] = [];
  const sync: string[] = [];
  const asyncs: string[] = [];
  const exported = new Set<string>(Object.keys(model.schemas).map(pascalName));
  for (const operation of model.operations) {
    const names = typeNames(operation);
    const bodyType = operation.body ? (operation.body.json === null ? 'str' : types.type(operation.body.json, names.body)) : null;
    if (bodyType && bodyType !== names.body) aliases.push(`${names.body}: TypeAlias = ${bodyType}\n`);
    if (operation.body) exported.add(names.body);
    const response = successType(types, operation);
    if (response !== names.response) aliases.push(`${names.response}: TypeAlias = ${response}\n`);
    exported.add(names.response);
    let itemType: string | null = null;
    if (operation.paging) {
      itemType = types.type(operation.paging.itemSchema, names.item);
      if (itemType !== names.item) aliases.push(`${names.item}: TypeAlias = ${itemType}\n`);
      exported.add(names.item);
    }

    const args = ['self'];
    const bodyArg = operation.body ? `body: ${operation.body.textMediaType && operation.body.json !== null ? `Union[${names.body}, str]` : names.body}` : null;
    if (bodyArg) args.push(bodyArg);
    const keywords = operation.parameters.map((parameter) => {
      const type = parameterType(types, parameter, operation);
      return parameter.required ? `${pythonParameterName(parameter)}: ${type}` : `${pythonParameterName(parameter)}: Optional[${type}] = None`;
    });
    // Required keywords first: Python takes no required keyword after one with a default.
    const ordered = [...keywords.filter((k) => !k.includes(' = ')), ...keywords.filter((k) => k.includes(' = ')), 'options: Optional[RequestOptions] = None'];
    const signature = `${args.join(', ')}, *, ${ordered.join(', ')}`;
    const mapping = (where: Parameter['in']) =>
      `{${operation.parameters
        .filter((parameter) => parameter.in === where)
        .map((parameter) => `${str(parameter.name)}: ${pythonParameterName(parameter)}`)
        .join(', ')}}`;
    const answer = operation.success.find((candidate) => candidate.kind !== 'empty')?.kind ?? 'empty';
    const spec =
      `CallSpec(method=${str(operation.method)}, path=${str(operation.path)}, path_params=${mapping('path')}, query=${mapping('query')}, headers=${mapping('header')}, ` +
      `${operation.body ? 'body=body, ' : ''}${operation.body?.textMediaType ? `text_media_type=${str(operation.body.textMediaType)}, ` : ''}counted=${operation.counted ? 'True' : 'False'}, answer=${str(answer)})`;
    const doc = methodDoc(operation);
    sync.push(`    def ${operation.pythonName}(${signature}) -> ${names.response}:\n${doc}        return cast(${str(names.response)}, self._call(${spec}, options))\n`);
    asyncs.push(`    async def ${operation.pythonName}(${signature}) -> ${names.response}:\n${doc}        return cast(${str(names.response)}, await self._call(${spec}, options))\n`);
    if (operation.paging) {
      const rest = operation.parameters.filter((parameter) => !(parameter.in === 'query' && parameter.name === 'cursor'));
      const pageKeywords = keywords.filter((_, i) => operation.parameters[i]!.name !== 'cursor' || operation.parameters[i]!.in !== 'query');
      const pageOrdered = [...pageKeywords.filter((k) => !k.includes(' = ')), ...pageKeywords.filter((k) => k.includes(' = ')), 'options: Optional[RequestOptions] = None'];
      const pass = [...(operation.body ? ['body'] : []), ...rest.map((parameter) => `${pythonParameterName(parameter)}=${pythonParameterName(parameter)}`), 'cursor=cursor', 'options=options'];
      const pageSignature = `${['self', ...(bodyArg ? [bodyArg] : [])].join(', ')}, *, ${pageOrdered.join(', ')}`;
      const pageDoc = docstring(
        `Every item of ${operation.method} ${operation.path}, page after page (each page one request, following next_cursor).${operation.counted ? ' Each page is a counted call.' : ''}`,
        '        ',
      );
      const field = str(operation.paging.itemsField);
      sync.push(
        `    def iter_${operation.pythonName}(${pageSignature}) -> Iterator[${names.item}]:\n${pageDoc}` +
          `        def page(cursor: Optional[str]) -> Any:\n            return self.${operation.pythonName}(${pass.join(', ')})\n\n` +
          `        return cast(Iterator[${names.item}], self._paginate(page, ${field}))\n`,
      );
      asyncs.push(
        `    def iter_${operation.pythonName}(${pageSignature}) -> AsyncIterator[${names.item}]:\n${pageDoc}` +
          `        async def page(cursor: Optional[str]) -> Any:\n            return await self.${operation.pythonName}(${pass.join(', ')})\n\n` +
          `        return cast(AsyncIterator[${names.item}], self._paginate(page, ${field}))\n`,
      );
    }
  }
  const codes = model.errorCodes.map(pyLiteral).join(', ');
  const typesFile =
    `${HEADER(model)}from typing import Any, Dict, List, Literal, NoReturn, Optional, Union\n\nfrom typing_extensions import NotRequired, TypeAlias, TypedDict\n\n` +
    `# The code of an error body: a closed set (docs/api.md lists each with what to do). A 401's body has none.\nErrorCode = Literal[${codes}]\n\n\n` +
    types.definitions.join('\n\n') +
    (aliases.length ? `\n\n${aliases.join('')}` : '') +
    `\n\n__all__ = [${['ErrorCode', ...exported].map(str).join(', ')}]\n`;
  const imports = [...exported].sort();
  const clientFile =
    `${HEADER(model)}from typing import Any, AsyncIterator, Iterator, Literal, Optional, Union, cast\n\n` +
    `from ._core import AsyncCore, CallSpec, RequestOptions, SyncCore\n` +
    `from ._types import (\n${imports.map((name) => `    ${name},`).join('\n')}\n)\n\n\n` +
    `class Vinhistory(SyncCore):\n${docstring(`The ${model.title}, one method per operation of its OpenAPI document (blocking, on httpx.Client).`, '    ')}\n${sync.join('\n')}\n\n` +
    `class AsyncVinhistory(AsyncCore):\n${docstring(`The ${model.title}, one method per operation of its OpenAPI document (asyncio, on httpx.AsyncClient).`, '    ')}\n${asyncs.join('\n')}`;
  return { types: typesFile, client: clientFile };
}
