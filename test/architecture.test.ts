import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The rules of docs/architecture.md, read from the imports of src/: a rule broken by a new import
 * fails here, naming the file and what it imports.
 */
const SRC = fileURLToPath(new URL('../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'(\.{1,2}\/[^']+)'|import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;

/** Every file of src/ (as a path relative to src/) with the files of src/ it imports. */
const graph = new Map<string, string[]>(
  sourceFiles(SRC).map((file) => {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(IMPORT)].map((m) => path.relative(SRC, path.resolve(path.dirname(file), m[1] ?? m[2]!)));
    return [path.relative(SRC, file), targets];
  }),
);

const room = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : file);
const EDGES = ['http', 'web', 'cli', 'dev', 'app.ts', 'server.ts'];
const SERVICES = ['search', 'limits', 'accounts', 'billing', 'ingest', 'watches', 'webhooks', 'media', 'outbound', 'operations'];

function violations(rule: (from: string, to: string) => boolean): string[] {
  return [...graph].flatMap(([from, targets]) => targets.filter((to) => rule(from, to)).map((to) => `${from} -> ${to}`));
}

describe('architecture (docs/architecture.md)', () => {
  it('reads the imports of every source file', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('app.ts')).toContain('container.ts');
  });

  it('edges reach storage only to open and migrate the database, never a repository or a row type', () => {
    expect(violations((from, to) => EDGES.includes(room(from)) && to.startsWith('storage/') && to !== 'storage/database.ts')).toEqual([]);
  });

  it('row types stay inside storage', () => {
    expect(violations((from, to) => room(from) !== 'storage' && to === 'storage/schema.ts')).toEqual([]);
  });

  it('services never reach an edge, the app or the container', () => {
    expect(
      violations((from, to) => SERVICES.includes(room(from)) && [...EDGES, 'container.ts'].includes(room(to))),
    ).toEqual([]);
  });

  it('storage depends on the domain (and the configuration) alone; the domain on nothing of the product', () => {
    expect(violations((from, to) => room(from) === 'storage' && !['storage', 'domain', 'config.ts', 'worker-threads.ts'].includes(room(to)))).toEqual([]);
    expect(violations((from, to) => room(from) === 'domain' && room(to) !== 'domain')).toEqual([]);
  });

  it('only the process roots, the CLI and the dev tools build the container', () => {
    expect(violations((from, to) => to === 'container.ts' && !['app.ts', 'server.ts', 'cli', 'dev'].includes(room(from)))).toEqual([]);
  });

  it('has no import cycle', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, trail: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...trail.slice(trail.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) visit(next, [...trail, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(cycles).toEqual([]);
  });
});
