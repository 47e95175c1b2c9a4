import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { attachSearchesFile, SEARCHES_SCHEMA, searchesFileOf } from './searches-file.ts';

/**
 * Online backup and restore of the embedded SQLite database (docs/deploy.md, "Backups"). Both go
 * through SQLite's backup API, never a file copy: a copy of a database in WAL mode taken while it
 * serves can miss the pages still in the -wal file, or catch a page half-written.
 *
 * The database is two files (searches-file.ts): the main file and the searches file beside it. A
 * backup is two files likewise, named by the same rule (`backup.sqlite`, `backup-searches.sqlite`),
 * copied from one read snapshot of both, so that no search is in one and missing from the other.
 */

export interface BackupResult {
  readonly file: string;
  readonly bytes: number;
  readonly pages: number;
  /** The searches file's copy; null when the database had none (made before the split, migration 0028). */
  readonly searches: { readonly file: string; readonly bytes: number } | null;
}

/** After the first step, the rest in one: a write by another connection between steps would restart the copy. */
const ALL_AT_ONCE = { progress: () => 1_000_000_000 };

/**
 * Copies `source` (which may be serving) into `target`, a file that must not exist yet, and its
 * searches file into the searches file of `target`: the copies are one consistent moment of both
 * files, written to temporary files beside the targets, checked with `PRAGMA integrity_check`,
 * and only then renamed into place.
 */
export async function backupSqlite(source: string, target: string): Promise<BackupResult> {
  if (!existsSync(source)) throw new Error(`there is no database at ${source}`);
  const searchesSource = searchesFileOf(source);
  const searchesTarget = searchesFileOf(target);
  const split = existsSync(searchesSource);
  for (const file of split ? [target, searchesTarget] : [target]) {
    if (existsSync(file)) throw new Error(`${file} exists already: choose a new file name`);
  }
  const temporary = `${target}.${process.pid}.partial`;
  const searchesTemporary = `${searchesTarget}.${process.pid}.partial`;
  const removeTemporaries = () => {
    rmSync(temporary, { force: true });
    rmSync(searchesTemporary, { force: true });
  };
  const db = new BetterSqlite3(source, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    if (split) attachSearchesFile(db, searchesSource, { readonly: true });
    // One read snapshot of both files, held across both copies (the backup API reads through the
    // source connection's open transaction); in WAL mode it does not block the server's writers.
    db.exec('begin');
    try {
      db.prepare('select count(*) from main.sqlite_master').get();
      if (split) db.prepare(`select count(*) from ${SEARCHES_SCHEMA}.sqlite_master`).get();
      await db.backup(temporary, ALL_AT_ONCE);
      // better-sqlite3 copies an attached database when named (`attached`); its typings omit the option.
      if (split) await db.backup(searchesTemporary, { ...ALL_AT_ONCE, attached: SEARCHES_SCHEMA } as BetterSqlite3.BackupOptions);
    } finally {
      db.exec('commit');
    }
  } catch (error) {
    removeTemporaries();
    throw error;
  } finally {
    db.close();
  }
  const check = checkSqlite(temporary);
  const searchesCheck = split ? checkSqlite(searchesTemporary, 'searches') : null;
  const problem = check.problem ?? searchesCheck?.problem;
  if (problem) {
    removeTemporaries();
    throw new Error(`the copy failed its integrity check: ${problem}`);
  }
  // The searches file first: a main backup file is never there without its searches file.
  if (split) renameSync(searchesTemporary, searchesTarget);
  renameSync(temporary, target);
  return { file: target, bytes: check.bytes, pages: check.pages, searches: searchesCheck ? { file: searchesTarget, bytes: searchesCheck.bytes } : null };
}

/**
 * `PRAGMA integrity_check` of a database file, and its size; `problem` is null when it is sound.
 * `kind`: the main file (it has the migrations' table) or a searches file (it has the usage counters).
 */
export function checkSqlite(file: string, kind: 'main' | 'searches' = 'main'): { problem: string | null; bytes: number; pages: number } {
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
    const marker = kind === 'main' ? 'kysely_migration' : 'usage_counters';
    const tables = Number(db.prepare("select count(*) from sqlite_master where type = 'table' and name = ?").pluck().get(marker));
    if (result !== 'ok') return { problem: result.slice(0, 500), bytes: pages * pageSize, pages };
    if (tables === 0) return { problem: kind === 'main' ? 'not a vinhistory database (no migrations table)' : 'not a vinhistory searches file (no usage counters)', bytes: pages * pageSize, pages };
    return { problem: null, bytes: pages * pageSize, pages };
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error), bytes: 0, pages: 0 };
  } finally {
    db.close();
  }
}

/** Whether a main file has run the migration that moved the searches' tables out of it (0028). */
function movedItsSearches(file: string): boolean {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("select 1 from kysely_migration where name = '0028-searches-file'").get() !== undefined;
  } finally {
    db.close();
  }
}

/** Writes `source` over `target` through the backup API (which also empties the target's -wal file). */
async function copyOver(source: string, target: string): Promise<void> {
  const backup = new BetterSqlite3(source, { readonly: true, fileMustExist: true });
  try {
    await backup.backup(target);
  } finally {
    backup.close();
  }
}

/**
 * Puts the backup `source` and its searches file in place of the database `target` and its
 * searches file, through the backup API, after keeping the database being replaced (both files)
 * beside it as `<target>.before-restore-<time>`. A backup made before the split (one file, its
 * searches still in it) is restored with no searches file: the next start moves them (0028). The
 * caller makes sure no server holds `target`. Not atomic across the two files: a restore that
 * stopped halfway is run again.
 */
export async function restoreSqlite(source: string, target: string, now = new Date()): Promise<{ kept: string | null }> {
  const check = checkSqlite(source);
  if (check.problem) throw new Error(`${source} is not a sound vinhistory database: ${check.problem}`);
  const searchesSource = searchesFileOf(source);
  const split = existsSync(searchesSource);
  if (split) {
    const searchesCheck = checkSqlite(searchesSource, 'searches');
    if (searchesCheck.problem) throw new Error(`${searchesSource} is not a sound vinhistory searches file: ${searchesCheck.problem}`);
  } else if (movedItsSearches(source)) {
    throw new Error(`${source} has its searches in a file of its own, and ${searchesSource} is missing: restore needs both files of the backup`);
  }
  let kept: string | null = null;
  if (existsSync(target)) {
    kept = `${target}.before-restore-${now.toISOString().replace(/[:.]/g, '-')}`;
    await backupSqlite(target, kept);
  } else {
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  }
  const searchesTarget = searchesFileOf(target);
  if (split) await copyOver(searchesSource, searchesTarget);
  else for (const file of [searchesTarget, `${searchesTarget}-wal`, `${searchesTarget}-shm`]) rmSync(file, { force: true });
  await copyOver(source, target);
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
