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
const EDGES = ['http', 'web', 'cli', 'dev', 'mcp', 'app.ts', 'server.ts'];
const SERVICES = ['search', 'limits', 'accounts', 'billing', 'ingest', 'watches', 'webhooks', 'media', 'outbound', 'pdf', 'operations', 'market', 'verification', 'history', 'feeds'];

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

  it('no file outside storage/dialects/ asks which database it runs on: each calls the dialect it was given', () => {
    const branch = /\bdialect(?:\.name)?\s*[!=]==|[!=]==\s*[\w.]*\bdialect(?:\.name)?\b|instanceof\s+(?:Sqlite|Postgres)StorageDialect\b/;
    const found = [...graph.keys()]
      .filter((file) => !file.startsWith('storage/dialects/'))
      .flatMap((file) =>
        readFileSync(path.join(SRC, file), 'utf8')
          .split('\n')
          .flatMap((line, i) => (branch.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(found).toEqual([]);
  });

  it('inside storage every import runs down its floors (docs/architecture.md, "Storage"), and neither dialect reaches the other', () => {
    // From the ground up; a folder is one floor, whose files may import each other.
    const floors = [
      'storage/schema.ts',
      'storage/migrations/',
      'storage/subscription-in-force.ts',
      'storage/lot-rows.ts',
      'storage/prepared-query.ts',
      'storage/ledger-statements.ts',
      'storage/principal-recheck.ts',
      'storage/search-commit.ts',
      'storage/dialects/',
      'storage/deferred-indexes.ts',
      'storage/database.ts',
      'storage/repositories/',
      'storage/transaction.ts',
    ];
    const floorOf = (file: string) => floors.findIndex((floor) => (floor.endsWith('/') ? file.startsWith(floor) : file === floor));
    const inStorage = (file: string) => file.startsWith('storage/');
    expect([...graph.keys()].filter((file) => inStorage(file) && floorOf(file) === -1)).toEqual([]);
    expect(violations((from, to) => inStorage(from) && inStorage(to) && floorOf(to) > floorOf(from))).toEqual([]);
    // Two floors of one folder do not make a loop of rooms: the same floor is only a folder's own.
    expect(violations((from, to) => inStorage(from) && inStorage(to) && floorOf(to) === floorOf(from) && !floors[floorOf(from)]!.endsWith('/') && from !== to)).toEqual([]);
    const side = (file: string) => /^storage\/dialects\/(sqlite|postgres)\//.exec(file)?.[1];
    expect(violations((from, to) => side(from) !== undefined && side(to) !== undefined && side(from) !== side(to))).toEqual([]);
    // Repositories know the interface, never one side of it (database.ts alone chooses the side).
    expect(violations((from, to) => from.startsWith('storage/repositories/') && side(to) !== undefined)).toEqual([]);
  });

  it('the two dialects have the same file set, but for the files docs/architecture.md names as one side\'s own', () => {
    const filesOf = (side: string) => [...graph.keys()].filter((file) => file.startsWith(`storage/dialects/${side}/`)).map((file) => path.basename(file));
    const ownSqlite = ['backup.ts', 'checkpointer.ts', 'search-batch.ts', 'search-commit-thread.ts', 'search-commit-worker.ts', 'searches-file.ts', 'write-gate.ts'];
    const ownPostgres = ['batched-reads.ts', 'commits.ts'];
    expect(filesOf('sqlite').filter((file) => !ownSqlite.includes(file)).sort()).toEqual(filesOf('postgres').filter((file) => !ownPostgres.includes(file)).sort());
  });

  it('the container builds from the service rooms, never from an edge', () => {
    expect(violations((from, to) => from === 'container.ts' && EDGES.includes(room(to)))).toEqual([]);
  });

  it('plugins of the API live in http/plugins/; the website keeps its own in web/, in no second plugins folder', () => {
    expect([...graph.keys()].filter((file) => file.split('/').includes('plugins') && !file.startsWith('http/plugins/'))).toEqual([]);
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
