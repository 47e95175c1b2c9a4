import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * A fresh clone is the whole project: no source, test, bench or bin file may read anything beside
 * the checkout (the suite once read its samples from a folder beside the checkout that only one
 * machine had). Every string in the code that is a relative path or a `file:` URL is resolved, and one
 * that lands outside the repository fails the suite, naming the file and line. Comments are not
 * code, so they may still say where data came from.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCANNED = ['src', 'test', 'bench', 'bin'];
const CODE_FILE = /\.(?:[cm]?[jt]sx?)$/;

interface Escape {
  file: string;
  line: number;
  path: string;
}

function filesUnder(dir: string, name: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name.startsWith('.') ? [] : filesUnder(full, name);
    return name.test(entry.name) ? [full] : [];
  });
}

const isInside = (target: string) => {
  const relative = path.relative(ROOT, target);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
};

const isRelativePath = (text: string) => /^\.\.?(?:[/\\]|$)/.test(text);

/** The literal text of a string or of a template's first part (`../data/${name}` gives `../data/`). */
function literalText(node: ts.Node): string | null {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return node.head.text;
  return null;
}

/**
 * Whether the literal's base is its own file: an import specifier, the first argument of
 * `new URL(..., import.meta.url)`, or the tail of a `join`/`resolve` from a computed folder
 * (`path.resolve(here, '../..')`), which this code always takes from its own location. Any other
 * literal (`readFileSync('../x')`, `path.resolve('../x')`) is taken from the working directory,
 * the repository root, so it must stay inside from there too.
 */
function isFileRelative(node: ts.Node): boolean {
  const parent = node.parent;
  if (ts.isImportDeclaration(parent) || ts.isExportDeclaration(parent) || ts.isExternalModuleReference(parent)) return true;
  if (ts.isCallExpression(parent) && parent.expression.kind === ts.SyntaxKind.ImportKeyword) return true;
  if (ts.isNewExpression(parent) && parent.arguments?.[0] === node) {
    const base = parent.arguments[1];
    return base !== undefined && base.getText() === 'import.meta.url';
  }
  return joinsFromComputedFolder(parent);
}

/** `join(here, ...)` or `resolve(here, ...)` whose first argument is not a literal. */
function joinsFromComputedFolder(node: ts.Node): node is ts.CallExpression {
  if (!ts.isCallExpression(node) || node.arguments.length < 2) return false;
  const callee = node.expression;
  const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : '';
  return (name === 'join' || name === 'resolve') && literalText(node.arguments[0]!) === null;
}

/** `join(here, '..', '..', 'beside')`: the literal arguments after the folder, as one path. */
function joinedTail(call: ts.CallExpression): { node: ts.Node; text: string } | null {
  const parts: string[] = [];
  for (const argument of call.arguments.slice(1)) {
    const text = literalText(argument);
    if (text === null) break;
    parts.push(text);
  }
  return parts.length > 1 ? { node: call.arguments[1]!, text: parts.join('/') } : null;
}

function escapesOf(file: string, source: string): Escape[] {
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const escapes: Escape[] = [];
  const check = (node: ts.Node, text: string, fileRelative: boolean) => {
    const bases = fileRelative ? [path.dirname(file)] : [path.dirname(file), ROOT];
    let targets: string[] = [];
    // A bare `..` outside a path context is a string, not a path (`relative.startsWith('..')`).
    if (isRelativePath(text) && (fileRelative || /[/\\]/.test(text))) targets = bases.map((base) => path.resolve(base, text));
    // A bare `file://` is a prefix being matched, not a place.
    else if (/^file:\/\/[^/]*\/./i.test(text)) targets = [fileURLToPath(new URL(text))];
    if (targets.some((target) => !isInside(target))) {
      escapes.push({ file: path.relative(ROOT, file), line: tree.getLineAndCharacterOfPosition(node.getStart()).line + 1, path: text });
    }
  };
  const visit = (node: ts.Node) => {
    const text = literalText(node);
    if (text !== null) check(node, text, isFileRelative(node));
    if (joinsFromComputedFolder(node)) {
      const joined = joinedTail(node);
      if (joined) check(joined.node, joined.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return escapes;
}

describe('the repository stands on its own', () => {
  it('no file of src/, test/, bench/ or bin/ names a path outside the repository', () => {
    const files = SCANNED.flatMap((dir) => filesUnder(path.join(ROOT, dir), CODE_FILE));
    expect(files.length).toBeGreaterThan(100);
    const escapes = files.flatMap((file) => escapesOf(file, readFileSync(file, 'utf8')));
    expect(escapes.map((escape) => `${escape.file}:${escape.line}: ${escape.path}`)).toEqual([]);
  });

  it('the check finds every way the suite once read, or could read, the folder beside the checkout', () => {
    const helper = path.join(ROOT, 'test', 'ingest', 'helpers.ts');
    const bad = [
      "const sampleData = (name: string) => fileURLToPath(new URL(`../../../beside/data/${name}`, import.meta.url));",
      "import spec from '../../../beside/spec/contract.md';",
      "const csv = readFileSync('../beside/data/copart/salesdata-sample.csv');",
      "const dir = path.join(here, '..', '..', '..', 'beside');",
      "const url = new URL('file:///work/beside/data/x.csv');",
      '// Copied from ../../../beside/data/usa-cars/USA_cars_datasets.csv: a comment may say so.',
      "const fixture = new URL('../fixtures/usa-cars/usa-cars-full.csv', import.meta.url);",
    ].join('\n');
    // Lines 1 to 5 escape (line 4 through its joined segments); the comment and the fixture do not.
    const escapes = escapesOf(helper, bad);
    expect(escapes.map((escape) => escape.line)).toEqual([1, 2, 3, 4, 5]);
    expect(escapes.every((escape) => escape.file === path.join('test', 'ingest', 'helpers.ts') && escape.path.includes('beside'))).toBe(true);
  });

  it('every relative link of the Markdown documents points at a file of the repository', () => {
    // The README and the developers' guide once sent readers to a spec folder beside one checkout.
    const documents = filesUnder(ROOT, /\.md$/);
    expect(documents.map((file) => path.relative(ROOT, file))).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', path.join('docs', 'api.md')]));
    const broken = documents.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)]
        .map((match) => match[1]!.split('#')[0]!)
        .filter((target) => target !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(target))
        .filter((target) => {
          const resolved = path.resolve(path.dirname(file), decodeURIComponent(target));
          return !isInside(resolved) || !existsSync(resolved);
        })
        .map((target) => `${path.relative(ROOT, file)}: ${target}`),
    );
    expect(broken).toEqual([]);
  });
});
