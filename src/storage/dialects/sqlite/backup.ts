import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

/**
 * Online backup and restore of the embedded SQLite database (docs/deploy.md, "Backups"). Both go
 * through SQLite's backup API, never a file copy: a copy of a database in WAL mode taken while it
 * serves can miss the pages still in the -wal file, or catch a page half-written.
 */

export interface BackupResult {
  readonly file: string;
  readonly bytes: number;
  readonly pages: number;
}

/**
 * Copies `source` (which may be serving) into `target`, a file that must not exist yet: the copy
 * is one consistent moment of the database, written to a temporary file beside the target, checked
 * with `PRAGMA integrity_check`, and only then renamed into place.
 */
export async function backupSqlite(source: string, target: string): Promise<BackupResult> {
  if (!existsSync(source)) throw new Error(`there is no database at ${source}`);
  if (existsSync(target)) throw new Error(`${target} exists already: choose a new file name`);
  const temporary = `${target}.${process.pid}.partial`;
  const db = new BetterSqlite3(source, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    // After the first step, the rest in one: a write by another connection between steps restarts
    // the copy, which a server committing searches all the time could do forever. One step holds a
    // read snapshot, which in WAL mode does not block the server's writers.
    await db.backup(temporary, { progress: () => 1_000_000_000 });
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  } finally {
    db.close();
  }
  const check = checkSqlite(temporary);
  if (check.problem) {
    rmSync(temporary, { force: true });
    throw new Error(`the copy failed its integrity check: ${check.problem}`);
  }
  renameSync(temporary, target);
  return { file: target, bytes: check.bytes, pages: check.pages };
}

/** `PRAGMA integrity_check` of a database file, and its size; `problem` is null when it is sound. */
export function checkSqlite(file: string): { problem: string | null; bytes: number; pages: number } {
  let db: BetterSqlite3.Database;
  try {
    db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error), bytes: 0, pages: 0 };
  }
  try {
    const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
    const result = rows.map((row) => row.integrity_check).join('; ');
    const pages = Number(db.pragma('page_count', { simple: true }));
    const pageSize = Number(db.pragma('page_size', { simple: true }));
    const tables = Number(db.prepare("select count(*) from sqlite_master where type = 'table' and name = 'kysely_migration'").pluck().get());
    if (result !== 'ok') return { problem: result.slice(0, 500), bytes: pages * pageSize, pages };
    if (tables === 0) return { problem: 'not a vinhistory database (no migrations table)', bytes: pages * pageSize, pages };
    return { problem: null, bytes: pages * pageSize, pages };
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error), bytes: 0, pages: 0 };
  } finally {
    db.close();
  }
}

/**
 * Puts the backup `source` in place of the database `target`, through the backup API (which
 * also empties the target's -wal file), after keeping the database being replaced beside it as
 * `<target>.before-restore-<time>`. The caller makes sure no server holds `target`.
 */
export async function restoreSqlite(source: string, target: string, now = new Date()): Promise<{ kept: string | null }> {
  const check = checkSqlite(source);
  if (check.problem) throw new Error(`${source} is not a sound vinhistory database: ${check.problem}`);
  let kept: string | null = null;
  if (existsSync(target)) {
    kept = `${target}.before-restore-${now.toISOString().replace(/[:.]/g, '-')}`;
    await backupSqlite(target, kept);
  } else {
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  }
  const backup = new BetterSqlite3(source, { readonly: true, fileMustExist: true });
  try {
    await backup.backup(target);
  } finally {
    backup.close();
  }
  return { kept };
}

/**
 * Which servers hold a SQLite database: each `serve` leaves a file named after its process id in
 * `<database>.servers/` while it runs, and removes it when it stops. A file whose process is gone
 * (a server killed outright) does not count.
 */
export function markServing(database: string): () => void {
  const dir = `${database}.servers`;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, String(process.pid));
  writeFileSync(file, `${new Date().toISOString()}\n`, { mode: 0o600 });
  return () => rmSync(file, { force: true });
}

export function servingProcesses(database: string): number[] {
  const dir = `${database}.servers`;
  if (!existsSync(dir)) return [];
  const alive: number[] = [];
  for (const name of readdirSync(dir)) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    try {
      process.kill(pid, 0);
      alive.push(pid);
    } catch (error) {
      // EPERM: the process exists but belongs to someone else; it still holds the database.
      if ((error as NodeJS.ErrnoException).code === 'EPERM') alive.push(pid);
      else unlinkSync(path.join(dir, name));
    }
  }
  return alive;
}
