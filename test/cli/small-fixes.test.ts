import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDataDir, runCliInProcess } from './run-cli.ts';

const dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove();
});

describe('issue 27, the smaller items', () => {
  it('vinhistory --version prints the package version and exits 0', async () => {
    const data = makeDataDir();
    dirs.push(data);
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const result = await runCliInProcess([flag], { dataDir: data.dir });
      expect(result).toMatchObject({ code: 0, stdout: `${version}\n` });
    }
  });

  it('import of a file that does not exist says so, exits 1, and claims nothing was loaded', async () => {
    const data = makeDataDir();
    dirs.push(data);
    const nope = path.join(data.dir, 'nope.csv');
    const result = await runCliInProcess(['import', '--no-progress', nope], { dataDir: data.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${nope}: cannot read: ENOENT: no such file or directory`);
    expect(result.stderr).toContain('error: 1 file refused or not read completely; nothing was loaded.');
    expect(result.stderr).not.toContain('everything else');
  });
});
