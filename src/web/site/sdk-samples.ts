import { pythonMethodName, sdkMethodName, snakeName, takesNumber } from './sdk-names.ts';

/** What a sample of one operation needs to know of it. */
export interface SampleOperation {
  operationId?: unknown;
  method: string;
  path: string;
  /** Its required path and query parameters, each with the document's example (or null). */
  parameters: { name: string; in: 'path' | 'query'; schema: unknown; example: string | null }[];
  /** The JSON body to show, or null when the operation takes none. */
  body: Record<string, unknown> | null;
  /** Whether a success answers a body (a 204 does not). */
  answersBody: boolean;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const tsString = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** A JSON value written as TypeScript: single-quoted strings, bare keys where they are names. */
function tsValue(value: unknown): string {
  if (typeof value === 'string') return tsString(value);
  if (Array.isArray(value)) return `[${value.map(tsValue).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    const fields = Object.entries(value).map(([name, field]) => `${IDENTIFIER.test(name) ? name : tsString(name)}: ${tsValue(field)}`);
    return fields.length ? `{ ${fields.join(', ')} }` : '{}';
  }
  return JSON.stringify(value) ?? 'null';
}

/** A JSON value written as Python. */
function pythonValue(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (Array.isArray(value)) return `[${value.map(pythonValue).join(', ')}]`;
  if (typeof value === 'object') return `{${Object.entries(value).map(([name, field]) => `${JSON.stringify(name)}: ${pythonValue(field)}`).join(', ')}}`;
  return JSON.stringify(value);
}

/** A parameter's sample value: its example, a number where the SDK takes one, else a placeholder naming it. */
function value(parameter: SampleOperation['parameters'][number], quote: (text: string) => string): string {
  const text = parameter.example ?? `<${parameter.name}>`;
  return parameter.example !== null && takesNumber(parameter.schema) && /^\d+$/.test(text) ? text : quote(text);
}

/** The call of the TypeScript SDK (sdks/typescript) for an operation, ready to run as an ES module. */
export function typescriptSample(baseUrl: string, operation: SampleOperation): string {
  const args: string[] = [];
  if (operation.body) args.push(tsValue(operation.body));
  if (operation.parameters.length) {
    args.push(`{ ${operation.parameters.map((parameter) => `${IDENTIFIER.test(parameter.name) ? parameter.name : tsString(parameter.name)}: ${value(parameter, tsString)}`).join(', ')} }`);
  }
  const call = `client.${sdkMethodName(operation)}(${args.join(', ')})`;
  return [
    "import { Vinhistory } from '@vinhistory/sdk';",
    '',
    `const client = new Vinhistory({ token: process.env.VINHISTORY_TOKEN!, baseUrl: ${tsString(baseUrl)} });`,
    '',
    '// An error answer throws a VinhistoryApiError (status, code, message).',
    ...(operation.answersBody ? [`const answer = await ${call};`, 'console.log(answer);'] : [`await ${call};`]),
  ].join('\n');
}

/** The call of the Python SDK (sdks/python) for an operation. */
export function pythonSample(baseUrl: string, operation: SampleOperation): string {
  const args: string[] = [];
  if (operation.body) args.push(pythonValue(operation.body));
  for (const parameter of operation.parameters) args.push(`${snakeName(parameter.name)}=${value(parameter, (text) => JSON.stringify(text))}`);
  const call = `client.${pythonMethodName(operation)}(${args.join(', ')})`;
  return [
    'import os',
    'from vinhistory import Vinhistory',
    '',
    `client = Vinhistory(os.environ["VINHISTORY_TOKEN"], ${JSON.stringify(baseUrl)})`,
    '',
    '# An error answer raises a VinhistoryApiError (status, code, message).',
    ...(operation.answersBody ? [`answer = ${call}`, 'print(answer)'] : [call]),
  ].join('\n');
}
