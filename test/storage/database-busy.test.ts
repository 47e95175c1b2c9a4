import { describe, expect, it } from 'vitest';
import { isDatabaseBusy } from '../../src/storage/database.ts';

/** Which driver errors are the database busy (503, retry) rather than a fault (500). */
describe('isDatabaseBusy', () => {
  const withCode = (code: string) => Object.assign(new Error(code), { code });

  it('recognises SQLite busy and locked, with their extended codes', () => {
    for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_LOCKED', 'SQLITE_LOCKED_SHAREDCACHE']) {
      expect(isDatabaseBusy(withCode(code)), code).toBe(true);
    }
  });

  it('recognises PostgreSQL lock timeout, serialization failure and deadlock', () => {
    for (const code of ['55P03', '40001', '40P01']) expect(isDatabaseBusy(withCode(code)), code).toBe(true);
  });

  it('looks through a wrapping error to its cause', () => {
    expect(isDatabaseBusy(new Error('search failed', { cause: withCode('SQLITE_BUSY') }))).toBe(true);
  });

  it('leaves every other error a fault', () => {
    for (const error of [withCode('SQLITE_CONSTRAINT_UNIQUE'), withCode('SQLITE_BUSYNESS'), withCode('23505'), withCode('ECONNREFUSED'), new Error('x'), null, 'SQLITE_BUSY']) {
      expect(isDatabaseBusy(error)).toBe(false);
    }
  });
});
