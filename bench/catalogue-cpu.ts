/**
 * The CPU a catalogue page's statement costs, in process (`npm run bench:catalogue-cpu -- --data-dir
 * DIR [--rounds N]`): the statement the repository builds for each page the bench:market mixes
 * draw from (every model and year of the seed's catalogue for the filtered page, every make for
 * the upcoming and the first page, the masked VIN of every 4,999th lot in VIN order), over the SQLite database
 * a `bench:market --data-dir` run left, timed by process.cpuUsage (which the neighbours on a shared
 * machine change much less than the wall clock). Each shape also runs with the lot's JSON replaced
 * by a constant, which tells the index and row reads from the JSON, and through the repository's
 * own cataloguePage (the server's path: the tree's way of running the statement, and the rows
 * mapped to lots and positions), where the first columns run it through Kysely's driver, which
 * prepares it on every run. Run from two trees alternately
 * (on two copies of the file when a migration differs), it compares their pages on the same data.
 * The database is only read (no migration is run). With `--postgres URL --schema NAME` the same
 * over a schema a `bench:market --schema` run kept, on one connection, with its backend's CPU
 * (from /proc: the database on this machine) beside the repository's path.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CompiledQuery, sql } from 'kysely';
import { processCpuSeconds } from './support/children.ts';
import { VEHICLE_MODELS } from '../src/dev/seed/synthetic-catalogue.ts';
import { parseCatalogueQuery } from '../src/market/market-query.ts';
import { openDatabase } from '../src/storage/database.ts';
import { createRepositories } from '../src/storage/repositories/index.ts';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    // PostgreSQL instead: a schema a `bench:market --postgres URL --schema NAME` run kept, read over one connection.
    postgres: { type: 'string' },
    schema: { type: 'string' },
    rounds: { type: 'string', default: '3' },
  },
});
if (values['data-dir'] === undefined && (values.postgres === undefined || values.schema === undefined)) {
  throw new Error('--data-dir DIR (a bench:market --data-dir run) or --postgres URL --schema NAME (a bench:market --schema run)');
}
const rounds = Number(values.rounds);

type DirectRun = (owner: object, sql: string, parameters: unknown[]) => Promise<unknown[]> | null;

const db =
  values.postgres !== undefined
    ? await openDatabase({ kind: 'postgres', url: values.postgres }, { schema: values.schema!, maxConnections: 1 })
    : await openDatabase({ kind: 'sqlite', file: path.join(values['data-dir']!, 'vinhistory.sqlite') });
/** PostgreSQL's CPU, seconds: its one backend's (the pool holds one connection), read from /proc; 0 on SQLite. */
const backendPid = db.dialect.name === 'postgres' ? (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db.kysely)).rows[0]!.pid : null;
const backendSeconds = () => (backendPid === null ? Promise.resolve(0) : processCpuSeconds(`/proc/${backendPid}/stat`));
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

  process.stdout.write(
    `| page | pages | rows a page | CPU a page | without the JSON | worst page | cataloguePage, statement kept (runKept) | cataloguePage, through Kysely |${backendPid === null ? '' : ' PostgreSQL CPU: kept, through Kysely |'}\n` +
      `|---|---:|---:|---:|---:|---:|---:|---:|${backendPid === null ? '' : '---:|'}\n`,
  );
  for (const [name, queries] of Object.entries(shapes)) {
    const parsedQueries = queries.map((query) => {
      const parsed = parseCatalogueQuery(new URLSearchParams(query));
      if ('ok' in parsed) throw new Error(`${query}: ${parsed.messages.join(' ')}`);
      return parsed;
    });
    // One more lot than the page, as MarketCalls asks.
    const compiled = parsedQueries.map((parsed) => repos.market.catalogueQuery(parsed.filter, parsed.sort, now, parsed.after, parsed.limit + 1).compile());
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
    // The server's path, the statement kept (runKept) or, as before it, through Kysely's driver
    // (runKept answering null): alternating, `rounds` passes each, this process's CPU and the backend's.
    const { dialect } = db;
    const kept = dialect.runKept.bind(dialect);
    const paths = { kept, kysely: () => null };
    const used = { kept: { ms: 0, backendMs: 0 }, kysely: { ms: 0, backendMs: 0 } };
    for (const run of Object.values(paths)) {
      dialect.runKept = run;
      for (const parsed of parsedQueries) await repos.market.cataloguePage(parsed.filter, parsed.sort, now, parsed.after, parsed.limit + 1);
    }
    for (let round = 0; round < rounds; round++) {
      for (const [way, run] of Object.entries(paths) as [keyof typeof paths, DirectRun][]) {
        dialect.runKept = run;
        const started = process.cpuUsage();
        const backendBefore = await backendSeconds();
        for (const parsed of parsedQueries) await repos.market.cataloguePage(parsed.filter, parsed.sort, now, parsed.after, parsed.limit + 1);
        const backendAfter = await backendSeconds();
        const cpu = process.cpuUsage(started);
        used[way].ms += (cpu.user + cpu.system) / 1000 / rounds / parsedQueries.length;
        used[way].backendMs += ((backendAfter - backendBefore) * 1000) / rounds / parsedQueries.length;
      }
    }
    dialect.runKept = kept;
    process.stdout.write(
      `| ${name} | ${queries.length} | ${figures.json.rows.toFixed(1)} | ${figures.json.ms.toFixed(3)} ms | ${figures.constant.ms.toFixed(3)} ms | ${figures.json.worst.toFixed(2)} ms | ` +
        `${used.kept.ms.toFixed(3)} ms | ${used.kysely.ms.toFixed(3)} ms |${backendPid === null ? '' : ` ${used.kept.backendMs.toFixed(3)} ms, ${used.kysely.backendMs.toFixed(3)} ms |`}\n`,
    );
  }
} finally {
  await db.close();
}
