import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildState, ROOT, STAMP } from '../../bin/build-state.js';
import { DEMO_VIN } from '../../src/dev/demo/first-run.ts';
import { makeLot, validVin } from '../support/fixtures.ts';
import { cliEnv, freePort, makeDataDir, stopServer, type CliResult } from './run-cli.ts';

/**
 * bin/vinhistory.js runs the build (dist/) when it is current and the sources through tsx when
 * it is missing or older than any file under src/. Each case runs the launcher in a project tree
 * of its own (under the system's temporary folder) holding only what the case needs beside
 * bin/, package.json and the shared node_modules.
 */
const trees: string[] = [];
const servers: ChildProcess[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map(stopServer));
});
afterAll(() => {
  for (const tree of trees.splice(0)) rmSync(tree, { recursive: true, force: true });
});

function projectTree(): string {
  const tree = mkdtempSync(path.join(tmpdir(), 'vinhistory-launcher-'));
  trees.push(tree);
  cpSync(path.join(ROOT, 'bin'), path.join(tree, 'bin'), { recursive: true });
  cpSync(path.join(ROOT, 'package.json'), path.join(tree, 'package.json'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(tree, 'node_modules'));
  return tree;
}

function runLauncher(tree: string, args: string[], dataDir: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [path.join(tree, 'bin', 'vinhistory.js'), ...args], { env: cliEnv(dataDir), timeout: 30_000 }, (error, stdout, stderr) => {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- an ExecFileException, an Error, that the narrowing above hides from the rule.
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
    });
  });
}

/** `vinhistory serve` from the tree; resolves once /healthz answers 200, with the output so far. */
async function serve(tree: string, dataDir: string): Promise<{ base: string; stdout: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(tree, 'bin', 'vinhistory.js'), 'serve'], {
    env: cliEnv(dataDir, { PORT: String(port), HOST: '127.0.0.1' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  servers.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 25_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}:\n${stdout}\n${stderr}`);
    const response = await fetch(`${base}/healthz`).catch(() => null);
    if (response?.status === 200) {
      expect(await response.json()).toEqual({ status: 'ok' });
      return { base, stdout: () => stdout };
    }
    if (Date.now() > deadline) throw new Error(`serve did not answer /healthz within 25 s:\n${stdout}\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('bin/vinhistory.js, from the build', () => {
  let tree: string;
  beforeAll(() => {
    // The test setup has built dist/ from the current sources.
    expect(buildState(ROOT)).toBe('current');
    tree = projectTree();
    cpSync(path.join(ROOT, 'dist'), path.join(tree, 'dist'), { recursive: true });
    // The first-run demo data is read from demo/ beside dist/, as beside src/.
    symlinkSync(path.join(ROOT, 'demo'), path.join(tree, 'demo'));
  });

  it('serves the API, pages and reports from dist/ alone, with no sources beside it', async () => {
    const data = makeDataDir();
    try {
      const server = await serve(tree, data.dir);
      // The templates, stylesheets and legal placeholders copied beside the compiled code.
      const home = await fetch(`${server.base}/`);
      expect(home.status).toBe(200);
      const stylesheet = /<link rel="stylesheet" href="([^"]+)">/.exec(await home.text())?.[1];
      expect(stylesheet).toBeDefined();
      const css = await fetch(new URL(stylesheet!, server.base));
      expect(css.status).toBe(200);
      expect(css.headers.get('content-type')).toMatch(/^text\/css/);
      const terms = await fetch(`${server.base}/terms`);
      expect(terms.status).toBe(200);
      expect(terms.headers.get('content-type')).toMatch(/^text\/html/);

      // The demo token, then a search and its report page (translations and fonts).
      let token: string | undefined;
      for (let i = 0; i < 50 && !token; i++) {
        token = /vh_live_[0-9A-Za-z]{32}/.exec(server.stdout())?.[0];
        if (!token) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(token, server.stdout()).toBeDefined();
      const search = await fetch(`${server.base}/api/v1/search?vin=${DEMO_VIN}`, { headers: { authorization: token! } });
      expect(search.status).toBe(200);
      const { report_url: reportUrl } = (await search.json()) as { report_url: string };
      const report = await fetch(new URL(new URL(reportUrl).pathname + '?lang=uk', server.base));
      expect(report.status).toBe(200);
      expect(await report.text()).toContain(DEMO_VIN);
    } finally {
      data.remove();
    }
  });

  it('imports a file on its reader thread, whose module is the compiled sibling', async () => {
    const data = makeDataDir();
    try {
      const vin = validVin('1FTEW1EP1JFA6031');
      const lots = data.file('lots.ndjson', `${JSON.stringify(makeLot({ vin, lot_id: 1 }))}\n${JSON.stringify(makeLot({ vin, lot_id: 2 }))}\n`);
      const result = await runLauncher(tree, ['import', lots], data.dir);
      expect(result).toEqual({ code: 0, stdout: `${lots}: read 2, inserted 2, updated 0, unchanged 0, skipped 0\n`, stderr: '' });
    } finally {
      data.remove();
    }
  });
});

describe('bin/vinhistory.js, from the sources', () => {
  it('serves the API through tsx when there is no build', async () => {
    const tree = projectTree();
    symlinkSync(path.join(ROOT, 'src'), path.join(tree, 'src'));
    symlinkSync(path.join(ROOT, 'demo'), path.join(tree, 'demo'));
    expect(buildState(tree)).toBe('missing');
    const data = makeDataDir();
    try {
      await serve(tree, data.dir);
    } finally {
      data.remove();
    }
  });
});

describe('which tree the launcher runs', () => {
  const HOUR = 60 * 60 * 1000;
  const past = (hours: number) => new Date(Date.now() - hours * HOUR);

  /**
   * A tree whose two main modules say which one ran: src/ (TypeScript, so only tsx can run it)
   * edited two hours ago, and a complete build of one hour ago.
   */
  function markedTree(): string {
    const tree = projectTree();
    const write = (file: string, text: string, time: Date) => {
      mkdirSync(path.dirname(path.join(tree, file)), { recursive: true });
      writeFileSync(path.join(tree, file), text);
      utimesSync(path.join(tree, file), time, time);
    };
    write('src/cli/main.ts', "export async function main(argv: string[]): Promise<void> {\n  process.stdout.write(`sources ${argv.length}\\n`);\n}\n", past(2));
    write('src/web/views/page.eta', '<p>page</p>\n', past(2));
    for (const dir of ['src/web/views', 'src/web', 'src/cli', 'src']) utimesSync(path.join(tree, dir), past(2), past(2));
    write('tsconfig.build.json', '{}\n', past(2));
    write('dist/cli/main.js', 'export async function main(argv) {\n  process.stdout.write(`build ${argv.length}\\n`);\n}\n', past(1));
    write(`dist/${STAMP}`, '', past(1));
    return tree;
  }

  const ran = async (tree: string) => {
    const data = makeDataDir();
    try {
      const result = await runLauncher(tree, ['a', 'b'], data.dir);
      expect(result.code, result.stderr).toBe(0);
      return result.stdout;
    } finally {
      data.remove();
    }
  };

  it('runs the build when it is newer than every source, and the sources once one is edited', async () => {
    const tree = markedTree();
    expect(buildState(tree)).toBe('current');
    // Both get the whole argv: node, the script, then the arguments.
    expect(await ran(tree)).toBe('build 4\n');
    utimesSync(path.join(tree, 'src/web/views/page.eta'), new Date(), new Date());
    expect(buildState(tree)).toBe('stale');
    expect(await ran(tree)).toBe('sources 4\n');
  });

  it('counts any change under src/ or to the build settings, and a build cut short or missing', () => {
    const cases: [string, (tree: string) => void, string][] = [
      ['a template edited', (tree) => utimesSync(path.join(tree, 'src/web/views/page.eta'), new Date(), new Date()), 'stale'],
      ['a source deleted', (tree) => unlinkSync(path.join(tree, 'src/web/views/page.eta')), 'stale'],
      ['a folder added', (tree) => mkdirSync(path.join(tree, 'src/web/views/new')), 'stale'],
      ['tsconfig.build.json edited', (tree) => utimesSync(path.join(tree, 'tsconfig.build.json'), new Date(), new Date()), 'stale'],
      ['the build without its stamp', (tree) => unlinkSync(path.join(tree, 'dist', STAMP)), 'missing'],
      ['no build', (tree) => rmSync(path.join(tree, 'dist'), { recursive: true }), 'missing'],
      ['a build shipped without src/', (tree) => rmSync(path.join(tree, 'src'), { recursive: true }), 'current'],
    ];
    for (const [what, change, expected] of cases) {
      const tree = markedTree();
      expect(buildState(tree), `before: ${what}`).toBe('current');
      change(tree);
      expect(buildState(tree), what).toBe(expected);
    }
  });
});
