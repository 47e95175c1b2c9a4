import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildProgram } from '../../src/cli/main.ts';
import { ENVIRONMENT_VARIABLES } from '../../src/config.ts';

/**
 * No Docker engine or registry is usable where these tests run: the deploy files are checked as far
 * as they can be without one (docs/deploy.md says what was not run).
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DEPLOY = path.join(ROOT, 'deploy');
const read = (name: string) => readFileSync(path.join(DEPLOY, name), 'utf8');

interface Instruction {
  stage: string;
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions, continuation lines joined, comments left out, each with its stage. */
function dockerfile(): Instruction[] {
  const text = read('Dockerfile').replace(/\\\n/g, ' ');
  const out: Instruction[] = [];
  let stage = '';
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const [keyword, ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    if (keyword!.toUpperCase() === 'FROM') stage = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? '';
    out.push({ stage, keyword: keyword!.toUpperCase(), args });
  }
  return out;
}

const commands = buildProgram().commands.map((command) => command.name());

describe('deploy/Dockerfile', () => {
  const instructions = dockerfile();
  const stages = instructions.filter((i) => i.keyword === 'FROM').map((i) => i.stage);

  it('is multi-stage, ends as a user that is not root, with a HEALTHCHECK and node as PID 1 in exec form', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const last = instructions.filter((i) => i.stage === stages.at(-1));
    const users = last.filter((i) => i.keyword === 'USER').map((i) => i.args);
    expect(users.at(-1)).toBeDefined();
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
    expect(last.some((i) => i.keyword === 'HEALTHCHECK' && /CMD \[/.test(i.args))).toBe(true);
    const entrypoint = JSON.parse(last.find((i) => i.keyword === 'ENTRYPOINT')!.args) as string[];
    expect(entrypoint[0]).toBe('node');
    expect(existsSync(path.join(ROOT, entrypoint[1]!))).toBe(true);
    const cmd = JSON.parse(last.find((i) => i.keyword === 'CMD')!.args) as string[];
    expect(commands).toContain(cmd[0]);
  });

  it('installs Chromium and fonts in the image that runs, and points PDF_BROWSER_PATH at it', () => {
    const last = instructions.filter((i) => i.stage === stages.at(-1));
    const installs = last.filter((i) => i.keyword === 'RUN').map((i) => i.args).join(' ');
    expect(installs).toMatch(/apt-get install .*\bchromium\b/);
    expect(installs).toMatch(/\bfonts-noto/);
    expect(last.find((i) => i.keyword === 'ENV')?.args).toContain('PDF_BROWSER_PATH=/usr/bin/chromium');
  });

  it('every COPY source is in the repository (the build context) or in an earlier stage', () => {
    const copies = instructions.filter((i) => i.keyword === 'COPY');
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) {
      const words = copy.args.split(/\s+/);
      const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
      const paths = words.filter((w) => !w.startsWith('--'));
      const sources = paths.slice(0, -1);
      expect(sources.length).toBeGreaterThan(0);
      if (from) {
        expect(stages.slice(0, stages.indexOf(copy.stage))).toContain(from);
        // A path the earlier stage has: copied into it from the repository, or made by its build (dist).
        for (const source of sources) expect(existsSync(path.join(ROOT, source.replace(/^\/app\/?/, ''))) || source === '/app/dist' || source === '/app/node_modules').toBe(true);
      } else {
        for (const source of sources) expect(existsSync(path.join(ROOT, source)), `COPY ${source}`).toBe(true);
      }
    }
  });

  it('the ignore file keeps the local build and data out of the context', () => {
    const ignored = read('Dockerfile.dockerignore').split('\n');
    for (const entry of ['node_modules', 'dist', 'data', '.git']) expect(ignored).toContain(entry);
  });
});

describe('deploy/compose.yaml', () => {
  const compose = parse(read('compose.yaml'), { merge: true }) as {
    services: Record<string, { command?: string[]; environment?: Record<string, unknown>; deploy?: { replicas?: number }; depends_on?: Record<string, { condition: string }>; volumes?: string[]; build?: { context: string; dockerfile: string } }>;
  };
  const vinhistory = Object.entries(compose.services).filter(([, service]) => service.build?.dockerfile === 'deploy/Dockerfile');

  it('two instances behind a proxy, PostgreSQL, Redis, an S3-compatible store, and migrations run once first', () => {
    const { app, migrate, proxy, postgres, redis, minio } = compose.services;
    expect(app?.deploy?.replicas).toBe(2);
    expect(app?.command).toEqual(['serve']);
    expect(migrate?.command).toEqual(['migrate']);
    expect(app?.depends_on?.migrate?.condition).toBe('service_completed_successfully');
    expect([proxy, postgres, redis, minio].every(Boolean)).toBe(true);
    for (const [, service] of vinhistory) expect(commands).toContain(service.command![0]);
    // The proxy's config file is in the repository, where the compose file mounts it from.
    const mount = proxy!.volumes!.find((v) => v.endsWith(':/etc/caddy/Caddyfile:ro'))!;
    expect(existsSync(path.resolve(DEPLOY, mount.split(':')[0]!))).toBe(true);
    expect(existsSync(path.resolve(DEPLOY, vinhistory[0]![1].build!.context, vinhistory[0]![1].build!.dockerfile))).toBe(true);
  });

  it('every environment variable the service gets is one src/config.ts reads, and the set is a valid configuration', async () => {
    expect(vinhistory.map(([name]) => name).sort()).toEqual(['app', 'migrate']);
    const { loadConfig } = await import('../../src/config.ts');
    for (const [, service] of vinhistory) {
      const env = service.environment!;
      for (const name of Object.keys(env)) expect(ENVIRONMENT_VARIABLES, name).toContain(name);
      // Interpolated as compose would with every required value filled in.
      const filled = Object.fromEntries(
        Object.entries(env).map(([name, value]) => [
          name,
          String(value).replace(/\$\{([A-Z_]+)(:[-?])?([^}]*)\}/g, (_, variable: string, kind?: string, rest?: string) =>
            kind === ':-' ? rest! : variable.endsWith('PASSWORD') || variable.endsWith('_USER') ? 'placeholder' : variable.includes('SECRET') ? 'x'.repeat(40) : variable === 'PUBLIC_BASE_URL' ? 'https://api.example.com' : variable === 'SMTP_URL' ? 'smtps://u:p@smtp.example.com:465' : variable === 'SUPPORT_EMAIL' ? 'support@example.com' : 'Set',
          ),
        ]),
      );
      const config = loadConfig(filled);
      expect(config).toMatchObject({ isProduction: true, database: { kind: 'postgres' }, redisUrl: 'redis://redis:6379', trustProxy: 1, mail: { transport: 'smtp' } });
      expect(config.media.store?.kind).toBe('s3');
    }
  });
});

describe('deploy/vinhistory.service (systemd)', () => {
  const unit = read('vinhistory.service');

  it('runs node on the launcher with a command the CLI has, and the paths it names are in the repository', () => {
    const exec = /^ExecStart=(\S+) (\/opt\/vinhistory\/(\S+)) (\S+)$/m.exec(unit);
    expect(exec).not.toBeNull();
    expect(path.basename(exec![1]!)).toBe('node');
    expect(existsSync(path.join(ROOT, exec![3]!))).toBe(true);
    expect(commands).toContain(exec![4]);
    expect(/^Documentation=file:\/\/\/opt\/vinhistory\/(\S+)$/m.exec(unit)?.[1]).toSatisfy((doc: string) => existsSync(path.join(ROOT, doc)));
    expect(unit).toMatch(/^KillSignal=SIGTERM$/m);
    // Longer than the server's 15 s drain.
    expect(Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)?.[1])).toBeGreaterThan(15);
  });

  const analyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));
  it.skipIf(!analyze)('passes systemd-analyze verify (skipped where systemd-analyze is not installed)', () => {
    // verify checks the executable exists: node here is wherever this test's node is.
    const text = unit.replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath}`);
    const dir = execFileSync('mktemp', ['-d'], { encoding: 'utf8' }).trim();
    const file = path.join(dir, 'vinhistory.service');
    execFileSync('sh', ['-c', 'cat > "$1"', 'sh', file], { input: text });
    try {
      const output = execFileSync(analyze!, ['verify', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      expect(output).toBe('');
    } finally {
      execFileSync('rm', ['-rf', dir]);
    }
  });
});
