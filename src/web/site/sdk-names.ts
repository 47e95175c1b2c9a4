/**
 * The names an operation of the customers' OpenAPI document has in the SDKs (sdks/generate.ts
 * writes them) and in the /docs page's samples, kept in one place so that a sample never calls a
 * method the SDK does not have.
 */

const words = (text: string): string[] =>
  text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.toLowerCase());

const upperFirst = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

/** lowerCamelCase of any spelling: `lot_id` -> `lotId`, `Idempotency-Key` -> `idempotencyKey`. */
export function camelName(text: string): string {
  const [first = '', ...rest] = words(text);
  return first + rest.map(upperFirst).join('');
}

/** UpperCamelCase, for type names: `listWatches` -> `ListWatches`. */
export function pascalName(text: string): string {
  return words(text).map(upperFirst).join('');
}

const PYTHON_KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(' '),
);

/** snake_case for Python, with a trailing underscore where the word is a keyword: `from` -> `from_`. */
export function snakeName(text: string): string {
  const name = words(text).join('_');
  return PYTHON_KEYWORDS.has(name) ? `${name}_` : name;
}

/**
 * An operation's method name in the TypeScript SDK: its operationId, or for an operation without
 * one, the method and the path (`GET /api/v1/batches/{id}` -> `getBatchesById`).
 */
export function sdkMethodName(operation: { operationId?: unknown; method: string; path: string }): string {
  if (typeof operation.operationId === 'string' && operation.operationId.trim() !== '') return camelName(operation.operationId);
  const parts = operation.path
    .replace(/^\/api\/v\d+\//, '')
    .split('/')
    .filter(Boolean)
    .map((part) => (part.startsWith('{') ? `by ${part.slice(1, -1)}` : part));
  return camelName(`${operation.method} ${parts.join(' ')}`);
}

/** The same method's name in the Python SDK. */
export function pythonMethodName(operation: { operationId?: unknown; method: string; path: string }): string {
  return snakeName(sdkMethodName(operation));
}

/**
 * A string parameter whose pattern takes only digits (`limit`, `lot_id` in a path): the SDKs take
 * a number for it too, and the samples show one.
 */
export function takesNumber(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const { type, pattern } = schema as { type?: unknown; pattern?: unknown };
  if (type !== 'string' || typeof pattern !== 'string') return false;
  try {
    const regex = new RegExp(pattern);
    return regex.test('1') && !regex.test('a') && !regex.test('');
  } catch {
    return false;
  }
}
