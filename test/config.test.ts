import path from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

/** The problems loadConfig reports for this environment (it must throw a ConfigError). */
function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  test('defaults: port 3000, ./data resolved, the SQLite file under it, a local base URL', () => {
    const config = loadConfig({});
    const dataDir = path.resolve('./data');
    expect(config).toMatchObject({
      env: 'development',
      isProduction: false,
      port: 3000,
      host: '127.0.0.1',
      dataDir,
      database: { kind: 'sqlite', file: path.join(dataDir, 'vinhistory.sqlite') },
      publicBaseUrl: 'http://localhost:3000',
      logLevel: 'info',
    });
    expect(config.database).toEqual({ kind: 'sqlite', file: path.join(dataDir, 'vinhistory.sqlite') });
    expect(path.isAbsolute(config.dataDir)).toBe(true);
  });

  test('HOST: loopback outside production (the demo token is printed), every interface in production, as set otherwise', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ NODE_ENV: 'test' }).host).toBe('127.0.0.1');
    expect(loadConfig({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.com' }).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(loadConfig({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.com', HOST: '10.0.0.5' }).host).toBe('10.0.0.5');
  });

  test('MAIL_TRANSPORT: the outbox is a fallback unless chosen; smtp needs SMTP_URL', () => {
    expect(loadConfig({}).mail).toMatchObject({ transport: 'outbox', transportChosen: false });
    expect(loadConfig({ SMTP_URL: 'smtp://mail.example.com:587' }).mail).toMatchObject({ transport: 'smtp', transportChosen: true });
    expect(loadConfig({ MAIL_TRANSPORT: 'outbox' }).mail).toMatchObject({ transport: 'outbox', transportChosen: true });
    expect(loadConfig({ MAIL_TRANSPORT: 'outbox', SMTP_URL: 'smtp://mail.example.com' }).mail.transport).toBe('outbox');
    expect(problemsOf({ MAIL_TRANSPORT: 'smtp' })).toEqual(['SMTP_URL must be set with MAIL_TRANSPORT=smtp']);
    expect(problemsOf({ MAIL_TRANSPORT: 'pigeon' })[0]).toContain('MAIL_TRANSPORT="pigeon" is not valid: expected smtp or outbox');
  });

  test('reads only the environment it is given', () => {
    vi.stubEnv('PORT', '4321');
    vi.stubEnv('DATABASE_URL', 'postgres://elsewhere/db');
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.database.kind).toBe('sqlite');
    // Without an argument it reads process.env.
    expect(loadConfig().port).toBe(4321);
  });

  test('values are trimmed and converted; an empty variable means unset', () => {
    const config = loadConfig({ PORT: ' 8080 ', HOST: '127.0.0.1', LOG_LEVEL: 'debug', NODE_ENV: 'test', DATA_DIR: '' });
    expect(config).toMatchObject({ port: 8080, host: '127.0.0.1', logLevel: 'debug', env: 'test', dataDir: path.resolve('./data') });
    expect(loadConfig({ PORT: '' }).port).toBe(3000);
  });

  test('DATA_DIR: relative paths resolve against the working directory, absolute ones are kept', () => {
    expect(loadConfig({ DATA_DIR: '/srv/vinhistory' })).toMatchObject({
      dataDir: '/srv/vinhistory',
      database: { kind: 'sqlite', file: '/srv/vinhistory/vinhistory.sqlite' },
    });
    expect(loadConfig({ DATA_DIR: 'var/db' }).dataDir).toBe(path.join(process.cwd(), 'var/db'));
  });

  test('DATABASE_URL selects PostgreSQL', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://user:pw@db.internal:5432/vinhistory' }).database).toEqual({
      kind: 'postgres',
      url: 'postgres://user:pw@db.internal:5432/vinhistory',
    });
    expect(loadConfig({ DATABASE_URL: 'postgresql://localhost/x' }).database.kind).toBe('postgres');
  });

  test.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '3.5'],
    ['PORT', '1e3'],
    ['PORT', '0x10'],
    ['PORT', 'true'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['DATABASE_URL', './data/db.sqlite'],
    ['LOG_LEVEL', 'verbose'],
    ['NODE_ENV', 'staging'],
    ['PUBLIC_BASE_URL', 'api.example.com'],
    ['PUBLIC_BASE_URL', 'ftp://api.example.com'],
    ['REQUEST_TIMEOUT_MS', '0'],
    ['REQUEST_TIMEOUT_MS', '99'],
    ['REQUEST_TIMEOUT_MS', '1.5'],
    ['REQUEST_TIMEOUT_MS', 'never'],
    ['WEBHOOK_LEASE_MS', '14999'],
    ['WEBHOOK_LEASE_MS', '5000'],
    ['WEBHOOK_LEASE_MS', '1m'],
  ])('%s=%s is a ConfigError naming the variable', (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems).toHaveLength(1);
    // The problem starts with the variable and shows the value given (converted where it could be).
    expect(problems[0]!.startsWith(`${name}=`)).toBe(true);
    expect(problems[0]).toContain(value);
    expect(problems[0]).toContain('is not valid');
  });

  test('every bad variable is reported at once, and the message lists them', () => {
    let caught: unknown;
    try {
      loadConfig({ PORT: 'x', LOG_LEVEL: 'loud' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const error = caught as ConfigError;
    expect(error.problems.map((p) => p.split('=')[0]).sort()).toEqual(['LOG_LEVEL', 'PORT']);
    expect(error.message).toContain('PORT="x"');
    expect(error.message).toContain('LOG_LEVEL="loud"');
  });

  test('production requires PUBLIC_BASE_URL', () => {
    const problems = problemsOf({ NODE_ENV: 'production' });
    expect(problems).toEqual([expect.stringContaining('PUBLIC_BASE_URL must be set in production')]);
    const config = loadConfig({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://api.vinhistory.example' });
    expect(config).toMatchObject({ env: 'production', isProduction: true, publicBaseUrl: 'https://api.vinhistory.example' });
  });

  test('OPERATOR_EMAIL: where the operator copies of billing mail go; unset, nobody; not an address, refused with a hint', () => {
    expect(loadConfig({}).billingMail).toEqual({ operatorEmail: null });
    expect(loadConfig({ OPERATOR_EMAIL: 'billing@acme.example' }).billingMail).toEqual({ operatorEmail: 'billing@acme.example' });
    expect(problemsOf({ OPERATOR_EMAIL: 'billing' })).toEqual([expect.stringMatching(/^OPERATOR_EMAIL="billing".*an email address/)]);
  });

  test('REQUEST_TIMEOUT_MS bounds how long a client may take to send a request: 60 s unless set', () => {
    expect(loadConfig({}).requestTimeoutMs).toBe(60_000);
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '500' }).requestTimeoutMs).toBe(500);
  });

  test('WEBHOOK_LEASE_MS is how long a delivery claim holds an event: one minute unless set, never under 15 s', () => {
    expect(loadConfig({}).webhooks.leaseMs).toBe(60_000);
    expect(loadConfig({ WEBHOOK_LEASE_MS: '15000' }).webhooks.leaseMs).toBe(15_000);
  });

  test('the trailing slash of PUBLIC_BASE_URL is trimmed; a path is kept', () => {
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/' }).publicBaseUrl).toBe('https://api.example.com');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://example.com/vin//' }).publicBaseUrl).toBe('https://example.com/vin');
    expect(loadConfig({ PORT: '8080' }).publicBaseUrl).toBe('http://localhost:8080');
  });

  test('the result is frozen, database settings included', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.database)).toBe(true);
    expect(() => {
      (config as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(config.port).toBe(3000);
  });

  test('photo archive: off by default; a directory under DATA_DIR or MEDIA_DIR; an S3 bucket with its settings', () => {
    expect(loadConfig({}).media).toEqual({ store: null, concurrency: 8, hostConcurrency: 2, maxBytes: 15 * 1024 * 1024, imageShare: 0.5 });
    for (const [given, share] of [['1', 1], ['0.25', 0.25], ['.05', 0.05], ['1.00', 1]] as const) expect(loadConfig({ MEDIA_IMAGE_SHARE: given }).media.imageShare).toBe(share);
    expect(loadConfig({ MEDIA_ARCHIVE: 'directory', DATA_DIR: '/srv/vh' }).media.store).toEqual({ kind: 'directory', dir: '/srv/vh/media' });
    expect(loadConfig({ MEDIA_ARCHIVE: 'directory', MEDIA_DIR: '/photos' }).media.store).toEqual({ kind: 'directory', dir: '/photos' });
    const s3 = loadConfig({
      MEDIA_ARCHIVE: 's3',
      S3_BUCKET: 'vh-photos',
      S3_ENDPOINT: 'https://s3.example.com/',
      S3_REGION: 'eu-central-1',
      S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      S3_SECRET_ACCESS_KEY: 'very-secret-key',
      S3_FORCE_PATH_STYLE: 'true',
      S3_PREFIX: 'media/',
      MEDIA_CONCURRENCY: '16',
      MEDIA_HOST_CONCURRENCY: '4',
    });
    expect(s3.media).toMatchObject({
      store: { kind: 's3', bucket: 'vh-photos', endpoint: 'https://s3.example.com', region: 'eu-central-1', forcePathStyle: true, prefix: 'media/' },
      concurrency: 16,
      hostConcurrency: 4,
    });
    // The secret key is there for the SDK, and never in a logged or serialised config.
    expect(s3.media.store?.kind === 's3' && s3.media.store.credentials?.secretAccessKey).toBe('very-secret-key');
    expect(JSON.stringify(s3)).not.toContain('very-secret-key');
    expect(JSON.stringify(s3)).toContain('AKIAEXAMPLE');
  });

  test('photo archive: bad settings name their variable', () => {
    expect(problemsOf({ MEDIA_ARCHIVE: 'yes' })[0]).toMatch(/^MEDIA_ARCHIVE="yes" is not valid: expected one of off, directory, s3/);
    expect(problemsOf({ MEDIA_ARCHIVE: 's3' })).toEqual(['S3_BUCKET must be set with MEDIA_ARCHIVE=s3']);
    expect(problemsOf({ MEDIA_ARCHIVE: 's3', S3_BUCKET: 'b-1', S3_ACCESS_KEY_ID: 'x' })).toEqual([
      'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are set together or not at all',
    ]);
    expect(problemsOf({ S3_BUCKET: 'Not_A_Bucket' })[0]).toMatch(/^S3_BUCKET=/);
    expect(problemsOf({ S3_ENDPOINT: 's3.example.com' })[0]).toMatch(/^S3_ENDPOINT=/);
    expect(problemsOf({ MEDIA_CONCURRENCY: '0' })[0]).toMatch(/^MEDIA_CONCURRENCY=/);
    expect(problemsOf({ MEDIA_MAX_BYTES: '12' })[0]).toMatch(/^MEDIA_MAX_BYTES=/);
    for (const share of ['0', '0.0', '1.5', '2', 'half', '0.001']) expect(problemsOf({ MEDIA_IMAGE_SHARE: share })[0]).toMatch(/^MEDIA_IMAGE_SHARE=.*a fraction from 0.01 to 1/);
    expect(problemsOf({ S3_PREFIX: '/abs' })[0]).toMatch(/^S3_PREFIX=/);
  });

  test("a feed pull's thread priority: idle by default; a niceness from FEEDS_THREAD_PRIORITY, or from FEEDS_THREAD_NICE where it is not set", () => {
    expect(loadConfig({}).feeds.threadPriority).toEqual({ idle: true, niceness: 19 });
    expect(loadConfig({ FEEDS_THREAD_PRIORITY: 'idle', FEEDS_THREAD_NICE: '5' }).feeds.threadPriority).toEqual({ idle: true, niceness: 19 });
    expect(loadConfig({ FEEDS_THREAD_PRIORITY: '19' }).feeds.threadPriority).toEqual({ idle: false, niceness: 19 });
    expect(loadConfig({ FEEDS_THREAD_PRIORITY: '0', FEEDS_THREAD_NICE: '19' }).feeds.threadPriority).toEqual({ idle: false, niceness: 0 });
    expect(loadConfig({ FEEDS_THREAD_NICE: '0' }).feeds.threadPriority).toEqual({ idle: false, niceness: 0 });
    for (const value of ['20', '-1', 'IDLE', 'low']) expect(problemsOf({ FEEDS_THREAD_PRIORITY: value })[0]).toMatch(/^FEEDS_THREAD_PRIORITY=.*idle \(SCHED_IDLE\)/);
  });

  test("a feed pull's longest pause for the counted requests in flight: 100 ms by default, 0 never pauses", () => {
    expect(loadConfig({}).feeds.yieldMs).toBe(100);
    expect(loadConfig({ FEEDS_YIELD_MS: '0' }).feeds.yieldMs).toBe(0);
    expect(loadConfig({ FEEDS_YIELD_MS: '250' }).feeds.yieldMs).toBe(250);
    for (const value of ['-1', '1.5', '100000', '050', 'off']) expect(problemsOf({ FEEDS_YIELD_MS: value })[0]).toMatch(/^FEEDS_YIELD_MS=.*never pause/);
  });
});
