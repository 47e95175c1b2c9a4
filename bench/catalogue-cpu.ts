/**
 * The CPU a catalogue page's statement costs, in process (`npm run bench:catalogue-cpu -- --data-dir
 * DIR [--rounds N]`): the statement the repository builds for each page the bench:market mixes
 * draw from (every model and year of the seed's catalogue for the filtered page, every make for
 * the upcoming and the first page, the masked VIN of every 4,999th lot in VIN order), over the SQLite database
 * a `bench:market --data-dir` run left, timed by process.cpuUsage (which the neighbours on a shared
 * machine change much less than the wall clock). Each shape also runs with the lot's JSON replaced
 * by a constant, which tells the index and row reads from the JSON. Run from two trees alternately
 * (on two copies of the file when a migration differs), it compares their pages on the same data.
 * The database is only read (no migration is run).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CompiledQuery } from 'kysely';
import { VEHICLE_MODELS } from '../src/dev/seed/synthetic-catalogue.ts';
import { parseCatalogueQuery } from '../src/market/market-query.ts';
import { openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    rounds: { type: 'string', default: '3' },
  },
});
if (values['data-dir'] === undefined) throw new Error('--data-dir DIR: the directory of a bench:market --data-dir run');
const rounds = Number(values.rounds);

const db = await openDatabase({ kind: 'sqlite', file: path.join(values['data-dir'], 'vinhistory.sqlite') });
try {
  const repos = createRepositories(db);
  const now = new Date().toISOString();
  const vins = (await db.kysely.selectFrom('lots').select('vin').orderBy('vin').execute()).map((row) => row.vin).filter((_, i) => i % 4_999 === 0);
  const shapes: Record<string, string[]> = { 'filtered (make, model, three years, sold)': [], 'upcoming by make, oldest first': [], 'masked VIN': [], 'a make, first page': [] };
  for (const model of VEHICLE_MODELS) {
    for (let year = model.years[0]; year <= model.years[1]; year++) {
      shapes['filtered (make, model, three years, sold)']!.push(`make=${encodeURIComponent(model.brand)}&model=${encodeURIComponent(model.model)}&year_min=${year - 1}&year_max=${year + 1}&status=sold`);
    }
    shapes['upcoming by make, oldest first']!.push(`make=${encodeURIComponent(model.brand)}&status=upcoming&sort=sale_date_asc`);
    shapes['a make, first page']!.push(`make=${encodeURIComponent(model.brand)}`);
  }
  for (const vin of vins) shapes['masked VIN']!.push(`vin=${vin.slice(0, 11)}******`);

  process.stdout.write('| page | pages | rows a page | CPU a page | without the JSON | worst page |\n|---|---:|---:|---:|---:|---:|\n');
  for (const [name, queries] of Object.entries(shapes)) {
    const compiled = queries.map((query) => {
      const parsed = parseCatalogueQuery(new URLSearchParams(query));
      if ('ok' in parsed) throw new Error(`${query}: ${parsed.messages.join(' ')}`);
      // One more lot than the page, as MarketCalls asks.
      return repos.market.catalogueQuery(parsed.filter, parsed.sort, now, parsed.after, parsed.limit + 1).compile();
    });
    const figures: Record<'json' | 'constant', { ms: number; rows: number; worst: number }> = { json: { ms: 0, rows: 0, worst: 0 }, constant: { ms: 0, rows: 0, worst: 0 } };
    for (const variant of ['json', 'constant'] as const) {
      const statements = compiled.map((query) => CompiledQuery.raw(variant === 'json' ? query.sql : query.sql.replace(/^select .*? as "lot",/s, 'select 1 as "lot",'), [...query.parameters]));
      for (const statement of statements) await db.kysely.executeQuery(statement);
      let cpu = 0;
      let rows = 0;
      for (const statement of statements) {
        const started = process.cpuUsage();
        for (let round = 0; round < rounds; round++) rows += (await db.kysely.executeQuery(statement)).rows.length;
        const used = process.cpuUsage(started);
        const ms = (used.user + used.system) / 1000 / rounds;
        cpu += ms;
        figures[variant].worst = Math.max(figures[variant].worst, ms);
      }
      figures[variant].ms = cpu / statements.length;
      figures[variant].rows = rows / statements.length / rounds;
    }
    process.stdout.write(`| ${name} | ${queries.length} | ${figures.json.rows.toFixed(1)} | ${figures.json.ms.toFixed(3)} ms | ${figures.constant.ms.toFixed(3)} ms | ${figures.json.worst.toFixed(2)} ms |\n`);
  }
} finally {
  await db.close();
}
