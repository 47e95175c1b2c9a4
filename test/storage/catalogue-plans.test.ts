import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogueFilter, CataloguePosition, CatalogueSort } from '../../src/domain/catalogue.ts';
import { generateLots } from '../../src/dev/seed/synthetic-lots.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';

const ANY: CatalogueFilter = {
  makeKey: null, modelKey: null, damageKey: null, document: null, auction: null, yearMin: null, yearMax: null, odometerMax: null,
  priceMin: null, priceMax: null, saleFrom: null, saleTo: null, status: null, locationZip: null, vin: null,
};
const NOW = '2026-03-15T12:00:00.000Z';
const CURSOR: CataloguePosition = { value: '2024-05-01T14:00:00.000Z', auction: 'copart', lotId: 50_000_000 };

/** The catalogue's sale-date shapes that must read a page in index order (issue 24 at scale; 0023). */
const SHAPES: [string, Partial<CatalogueFilter>, string][] = [
  ['everything', {}, 'lots_sale_'],
  ['upcoming', { status: 'upcoming' }, 'lots_sale_'],
  ['sold', { status: 'sold' }, 'lots_sale_'],
  ['a make', { makeKey: 'FORD' }, 'lots_make_sale_'],
  ['a make, upcoming', { makeKey: 'FORD', status: 'upcoming' }, 'lots_make_sale_'],
  // Newest first, a make and model is a range of its own (0027); oldest first, the make's range (0023).
  ['a make and model', { makeKey: 'HONDA', modelKey: 'ACCORD' }, 'lots_model_sale_|lots_make_sale_'],
  ['a make and model, three years', { makeKey: 'HONDA', modelKey: 'ACCORD', yearMin: 2018, yearMax: 2020 }, 'lots_model_sale_|lots_make_sale_'],
  ['a make and model, three years, sold', { makeKey: 'HONDA', modelKey: 'ACCORD', yearMin: 2018, yearMax: 2020, status: 'sold' }, 'lots_model_sale_|lots_make_sale_'],
  ['a make and model, from a year, upcoming', { makeKey: 'HONDA', modelKey: 'ACCORD', yearMin: 2018, status: 'upcoming' }, 'lots_model_sale_|lots_make_sale_'],
];

/** The index a shape reads in `sort` order: SHAPES give `desc index|asc index` where the two orders differ. */
function indexFor(index: string, sort: CatalogueSort): string {
  const [desc, asc = desc] = index.split('|') as [string, string?];
  return `${sort === 'sale_date_desc' ? desc : asc}${sort.slice(10)}_idx`;
}

/**
 * SQLite's plan of each shape, in both sale-date orders, first page and from a cursor: a search of
 * the expected index with no temporary B-tree, i.e. a page read in order from its cursor rather than
 * every match sorted (what the filtered catalogue did at 1,000,000 lots: docs/benchmarks.md).
 * SQLite plans these without statistics (the service runs no ANALYZE), so a small database gives
 * the plan a large one gets.
 */
describe('catalogue plans (SQLite)', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('sqlite');
    await t.repos.lots.upsertBatch([...generateLots({ count: 400, seed: 3, until: new Date(NOW) })]);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  async function plan(filter: Partial<CatalogueFilter>, sort: CatalogueSort, after: CataloguePosition | null): Promise<string> {
    const query = t.repos.market.catalogueQuery({ ...ANY, ...filter }, sort, NOW, after, 25).compile();
    const { rows } = await t.db.kysely.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
    return rows.map((row) => row.detail).join('\n');
  }

  for (const [name, filter, index] of SHAPES) {
    for (const sort of ['sale_date_desc', 'sale_date_asc'] as const) {
      it(`${name}, ${sort}: read in order from ${indexFor(index, sort)}, first page and from a cursor`, async () => {
        for (const after of [null, CURSOR]) {
          const text = await plan(filter, sort, after);
          expect(text).not.toMatch(/TEMP B-TREE/);
          expect(text).toMatch(new RegExp(`^SEARCH lots USING INDEX ${indexFor(index, sort)} \\(|^SCAN lots USING INDEX ${indexFor(index, sort)}$`));
        }
      });
    }
  }

  it('a cursor narrows the index range itself (the row after it is a seek, not a filter of every entry)', async () => {
    expect(await plan({ makeKey: 'FORD' }, 'sale_date_desc', CURSOR)).toMatch(/\(make_key=\? AND <expr><\?\)/);
    expect(await plan({ makeKey: 'FORD' }, 'sale_date_asc', CURSOR)).toMatch(/\(make_key=\? AND <expr>>\?\)/);
    expect(await plan({}, 'sale_date_desc', CURSOR)).toMatch(/\(<expr><\?\)/);
    // A make and model's own range (0027): a model with fewer than a page of matches no longer reads its whole make.
    expect(await plan({ makeKey: 'HONDA', modelKey: 'ACCORD', yearMin: 2018, yearMax: 2020, status: 'sold' }, 'sale_date_desc', CURSOR)).toMatch(/\(make_key=\? AND model_key=\? AND <expr><\?\)/);
  });

  it("reads a market value's comparables from lots_market_idx alone (it covers every column they need), each year's window as a range", async () => {
    for (const damageKey of [null, 'FRONTEND']) {
      const query = t.repos.market.comparablesQuery({ makeKey: 'HONDA', modelKey: 'ACCORD', yearMin: 2018, yearMax: 2020, from: '2025-03-15T00:00:00.000Z', to: NOW, damageKey, excludeVin: '1HGCV1F30LA000001' }).compile();
      const { rows } = await t.db.kysely.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
      expect(rows.map((row) => row.detail).join('\n')).toMatch(/^SEARCH lots USING COVERING INDEX lots_market_idx \(make_key=\? AND model_key=\? AND year=\? AND sale_date>\? AND sale_date<\?\)$/);
    }
  });

  it('binds no parameter against a column of a partial index on lots (STAT4 would re-prepare the statement on every run)', async () => {
    const { rows } = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where type = 'index' and tbl_name = 'lots' and sql like '% where %'`.execute(t.db.kysely);
    const columns = rows.flatMap(({ sql: text }) => [...text.slice(text.toLowerCase().lastIndexOf(' where ')).matchAll(/"?([a-z_]+)"?\s*(?:=|!=|<>|<|>|is|in)/gi)].map((m) => m[1]!));
    const offending: string[] = [];
    for (const [, filter] of SHAPES) {
      for (const sort of ['sale_date_desc', 'sale_date_asc', 'price_asc'] as const) {
        const { sql: text } = t.repos.market.catalogueQuery({ ...ANY, ...filter }, sort, NOW, CURSOR, 25).compile();
        for (const column of columns) if (new RegExp(`"${column}"\\s*(?:=|!=|<>|<=|>=|<|>)\\s*\\?`).test(text)) offending.push(`${column}: ${text}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
