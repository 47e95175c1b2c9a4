import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createMigrator, migrateToLatest } from '../../../src/storage/database.ts';
import { DIALECTS } from '../../support/databases.ts';
import { openEmptyDatabase, type EmptyDatabase } from '../repositories/helpers.ts';

/** 0018 gives the lots stored before it their keys, computed as the import computes them, on both databases. */
describe.each(DIALECTS)('migration 0018 on %s', (dialect) => {
  let t: EmptyDatabase | null = null;
  afterEach(async () => {
    await t?.destroy();
    t = null;
  });

  it('fills make, model and damage keys of the lots stored before, and leaves unknown values without one', async () => {
    t = await openEmptyDatabase(dialect);
    const migrator = await createMigrator(t.db);
    const to17 = await migrator.migrateTo('0017-webhook-mail-and-retention');
    expect(to17.error).toBeUndefined();
    const at = '2026-01-01T00:00:00.000Z';
    await sql`insert into lots (auction, lot_id, vin, brand, model, primary_damage, created_at, updated_at) values
      ('copart', 1, 'JN1DL0MM5KC000001', 'Mercedes-Benz', 'F-150', 'Front end', ${at}, ${at}),
      ('iaai', 2, 'JN1DL0MM5KC000002', 'CITROËN', 'f150', null, ${at}, ${at}),
      ('iaai', 3, 'JN1DL0MM5KC000003', null, '--', 'FRONT END', ${at}, ${at})`.execute(t.db.kysely);
    await migrateToLatest(t.db);
    const { rows } = await sql<{ lot_id: number; make_key: string | null; model_key: string | null; damage_key: string | null }>`
      select lot_id, make_key, model_key, damage_key from lots order by lot_id`.execute(t.db.kysely);
    expect(rows.map((row) => ({ ...row, lot_id: Number(row.lot_id) }))).toEqual([
      { lot_id: 1, make_key: 'MERCEDESBENZ', model_key: 'F150', damage_key: 'FRONTEND' },
      { lot_id: 2, make_key: 'CITROEN', model_key: 'F150', damage_key: null },
      { lot_id: 3, make_key: null, model_key: null, damage_key: 'FRONTEND' },
    ]);
  });
});
