import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import safeRegex from 'safe-regex2';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Every regular expression written in src/ (literals, and `new RegExp` of a string literal),
 * checked for the shape that backtracks exponentially: a repetition inside a repetition (star
 * height above 1), as `(<!--[\s\S]*?-->\s*)*<svg` was (issue 28, F1). safe-regex2 judges by that
 * shape alone; docs/decisions.md says why it and not recheck. A new regex of that shape fails here,
 * naming its file, line and source; a safe one the checker cannot read (it does not know every
 * `u`-flag escape) is listed below with the reason it is safe.
 */
const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** Sources the checker misjudges, with why each is linear. Keyed by file and regex source. */
const REVIEWED: Record<string, string> = {
  [String.raw`domain/lot-ref.ts ^\/(?:[a-z]{2}\/)?lot\/(\d{1,10})(?:[/~?#]|$)`]: 'the outer repetition is an optional group (?) around a fixed-length one',
  [String.raw`ingest/local-time.ts ^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$`]: 'optional groups around fixed-length digits',
  [String.raw`ingest/normalise-lot.ts ^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$`]:
    'nested optional groups (?), each entered at most once; the one \\d+ is followed by a non-digit',
  [String.raw`ingest/normalise-lot.ts ^https?:\/\/[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?:[/?#][!-~]*)?$`]:
    'each repeated label starts with a dot, which no label holds, so a label can end in one place only: linear (100,000 labels: 2 ms)',
  [String.raw`ingest/values.ts ^\+?(?:\d+(?:\.\d*)?|\.\d+)$`]: 'an optional group (?) holding \\d* after a literal dot',
  [String.raw`media/media-store.ts ^[0-9a-f]{64}(?:-[a-z]{1,16})?\.[a-z0-9]{2,5}$`]: 'an optional group around a bounded repetition',
  [String.raw`web/report/i18n.ts ^(?:[A-Z]{2}\s+-\s+)?(.*?)(?:\s*\(([A-Za-z]{2})\))?$`]:
    'not exponential; quadratic in a run of spaces, which a stored document value never has (the import collapses whitespace, ingest/values.ts) and its length is bounded by LotSchema',
  [String.raw`web/report/language.ts ^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$`]: 'an optional group around a bounded repetition; the \\s* are parted by literals',
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return files(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

interface Found {
  where: string;
  source: string;
}

function regexesOf(file: string): Found[] {
  const text = readFileSync(file, 'utf8');
  const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Found[] = [];
  const where = (node: ts.Node) => `${path.relative(SRC, file)}:${sourceFile.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node: ts.Node) => {
    if (ts.isRegularExpressionLiteral(node)) {
      const literal = node.text;
      found.push({ where: where(node), source: literal.slice(1, literal.lastIndexOf('/')) });
    } else if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && ts.isIdentifier(node.expression) && node.expression.text === 'RegExp') {
      const first = node.arguments?.[0];
      if (first && (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first))) found.push({ where: where(node), source: first.text });
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

describe('regular expressions in src/', () => {
  const all = files(SRC).flatMap(regexesOf);

  it('finds the regexes of the sources (the walk reads them)', () => {
    expect(all.length).toBeGreaterThan(50);
    expect(all.some((regex) => regex.where.startsWith(path.join('accounts', 'brand-service.ts')))).toBe(true);
  });

  it('has none that can backtrack exponentially (no repetition inside a repetition)', () => {
    const unsafe = all
      .filter((regex) => !safeRegex(regex.source) && !(`${regex.where.replace(/:\d+$/, '')} ${regex.source}` in REVIEWED))
      .map((regex) => `${regex.where} /${regex.source}/`);
    expect(unsafe).toEqual([]);
  });

  it('the check catches the sniff that froze the server', () => {
    expect(safeRegex(String.raw`^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*|<!DOCTYPE[^>]*>\s*)*<svg[\s>]`)).toBe(false);
  });
});
