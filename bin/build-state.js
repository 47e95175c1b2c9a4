// Whether dist/ (the compiled sources, made by bin/build.js) may run in place of src/: shared by
// the CLI launcher, which checks it at every start, and by the build, which skips a current build.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Written last by a build, with the time the build started as its mtime: a file edited while the
 * build ran is newer than the stamp, and a build cut short has no stamp at all.
 */
export const STAMP = '.build-stamp';

/** Files outside src/ whose change changes the build's output. */
const BUILD_INPUTS = ['tsconfig.json', 'tsconfig.build.json'];

function mtimeMs(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * Whether anything under dir (the folder itself, its files and sub-folders, at any depth) changed
 * after `since`. Folders count too: deleting or renaming a file changes only its folder's mtime.
 */
function changedSince(dir, since) {
  if (statSync(dir).mtimeMs > since) return true;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() ? changedSince(full, since) : statSync(full).mtimeMs > since) return true;
  }
  return false;
}

/**
 * 'current' when dist/ holds a complete build at least as new as every file under src/ (and the
 * tsconfig files); 'missing' when there is no complete build; 'stale' when a source is newer.
 * A tree without src/ (a deployment that ships only dist/) runs its build.
 */
export function buildState(root = ROOT) {
  const built = mtimeMs(path.join(root, 'dist', STAMP));
  if (built === undefined) return 'missing';
  const src = path.join(root, 'src');
  if (mtimeMs(src) === undefined) return 'current';
  if (BUILD_INPUTS.some((file) => (mtimeMs(path.join(root, file)) ?? 0) > built)) return 'stale';
  return changedSince(src, built) ? 'stale' : 'current';
}
