import { createHash } from 'node:crypto';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { IN_CI } from './env.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = path.join(ROOT, 'node_modules', '.cache');

/**
 * Whether this machine can make a Python virtualenv (python3 with venv and ensurepip: Debian's
 * python3-venv). Under CI a missing one is a failure, never a skip (.ci/run installs it).
 */
export function pythonVenvAvailable(): boolean {
  if (IN_CI) return true;
  return spawnSync('python3', ['-c', 'import venv, ensurepip'], { stdio: 'ignore' }).status === 0;
}

/**
 * A virtualenv with a requirements file installed, made once and reused by later runs: it sits
 * under node_modules/.cache, named by a hash of the requirements and of the interpreter's version,
 * so a change of either makes a new one. pip gets one retry and a five-second timeout per index:
 * a machine whose configured index cannot be reached falls through to the next one quickly.
 * Answers the venv's python.
 */
export async function pythonVenv(requirementsFile: string): Promise<string> {
  const version = spawnSync('python3', ['--version'], { encoding: 'utf8' });
  if (version.status !== 0) throw new Error(`python3 is not on the PATH: ${version.stderr || version.error?.message}`);
  const key = createHash('sha256').update(readFileSync(requirementsFile)).update(version.stdout).digest('hex').slice(0, 16);
  const venv = path.join(CACHE, `vinhistory-python-${key}`);
  const python = path.join(venv, 'bin', 'python');
  if (existsSync(python)) return python;
  // Made beside and renamed into place, so that a run killed half-way never leaves a broken cache.
  const building = `${venv}.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  try {
    await run('python3', ['-m', 'venv', building]);
    await run(path.join(building, 'bin', 'python'), ['-m', 'pip', 'install', '--disable-pip-version-check', '--retries', '1', '--timeout', '5', '-q', '-r', requirementsFile], {
      timeout: 120_000,
    });
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    const failure = error as { stderr?: string; message?: string };
    throw new Error(`could not make the Python virtualenv (python3-venv installed? pip's index reachable?): ${failure.stderr || failure.message}`);
  }
  try {
    renameSync(building, venv);
  } catch {
    // Another run made it meanwhile: use that one.
    rmSync(building, { recursive: true, force: true });
  }
  return python;
}
