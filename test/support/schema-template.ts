import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { migrateToLatest, openDatabase } from '../../src/storage/database.ts';

const run = promisify(execFile);

/**
 * A migrated PostgreSQL schema, copied. Migrating a schema takes 25 migrations' round trips and
 * locks (1.5-2.5 s each on the 2-core machine, and the suite makes a hundred or more); restoring the
 * schema's `pg_dump` is one statement batch. Each test worker migrates one template schema
 * for real, dumps it once (structure and the rows the migrations seed), and restores that dump under
 * every new name. Without `pg_dump` on the PATH every schema is migrated as before.
 *
 * The tests of the migrations themselves open their databases directly and migrate them.
 */
export class SchemaTemplate {
  private dump: Promise<{ sql: string; name: string } | null> | undefined;

  constructor(
    private readonly url: string,
    private readonly newName: () => string,
  ) {}

  /** Makes `schema` hold what migrateToLatest would have made. */
  async create(schema: string): Promise<void> {
    this.dump ??= this.dumpTemplate();
    const template = await this.dump;
    if (!template) {
      const db = await openDatabase({ kind: 'postgres', url: this.url }, { schema });
      try {
        await migrateToLatest(db);
      } finally {
        await db.close();
      }
      return;
    }
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    try {
      // The template's name is random hex under the run's prefix: nothing else in the dump contains it.
      await client.query(template.sql.split(template.name).join(schema));
    } finally {
      await client.end();
    }
  }

  private async dumpTemplate(): Promise<{ sql: string; name: string } | null> {
    const name = this.newName();
    const db = await openDatabase({ kind: 'postgres', url: this.url }, { schema: name });
    try {
      await migrateToLatest(db);
    } finally {
      await db.close();
    }
    try {
      const { stdout } = await run(
        'pg_dump',
        ['--dbname', this.url, '--schema', name, '--inserts', '--no-owner', '--no-privileges', '--no-comments'],
        { maxBuffer: 64 * 1024 * 1024 },
      );
      // psql's meta-commands (pg_dump's `\restrict` guard) are not SQL: the server is sent the SQL alone.
      const sql = stdout
        .split('\n')
        .filter((line) => !line.startsWith('\\'))
        .join('\n');
      return { sql, name };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }
}
