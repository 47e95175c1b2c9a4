import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LightMyRequestResponse as Response } from 'fastify';
import type { App } from '../../src/app.ts';
import type { DialectName } from '../../src/storage/database.ts';
import type { ContainerOverrides } from '../../src/container.ts';
import type { ScryptCost } from '../../src/accounts/password-hasher.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import { buildAppOn, testConfig } from './app.ts';
import { createTestDatabase, type TestDatabase } from './databases.ts';

/**
 * A cheap scrypt for tests that log in many times; the hash format and the code path are the
 * production ones (the cost is stored in each hash), only the work factor is lower.
 */
export const TEST_SCRYPT: ScryptCost = { N: 1024, r: 8, p: 1 };

export interface AccountTestApp extends TestDatabase {
  app: App;
  dataDir: string;
  /**
   * The messages the outbox mail sender wrote, oldest first, once the mail worker has sent
   * everything queued so far (requests only queue their mail).
   */
  outbox(): Promise<string[]>;
  close(): Promise<void>;
}

export async function createAccountTestApp(
  dialect: DialectName,
  options: { env?: Record<string, string>; overrides?: ContainerOverrides; database?: TestDatabase; now?: () => Date } = {},
): Promise<AccountTestApp> {
  const database = options.database ?? (await createTestDatabase(dialect));
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vinhistory-account-'));
  const rateLimiter = new MemoryRateLimiter();
  const app = await buildAppOn({
    config: testConfig({ DATA_DIR: dataDir, ...options.env }),
    db: database.db,
    rateLimiter,
    ...(options.now ? { now: options.now } : {}),
    overrides: { passwordCost: TEST_SCRYPT, ...options.overrides },
  });
  await app.ready();
  return {
    ...database,
    app,
    dataDir,
    outbox: async () => {
      await app.services.mailDelivery.drain();
      const folder = path.join(dataDir, 'outbox');
      let files: string[];
      try {
        files = readdirSync(folder).sort();
      } catch {
        return [];
      }
      return files.map((file) => readFileSync(path.join(folder, file), 'utf8'));
    },
    close: async () => {
      await app.close();
      await rateLimiter.close();
      if (!options.database) await database.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The hidden CSRF field of a page's first form. */
export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no CSRF field on the page');
  return match[1]!;
}

/**
 * A minimal browser over inject(): keeps cookies as a browser would (by name; cleared when the
 * server expires them), sends forms url-encoded with the CSRF token of the last page it loaded.
 */
export class WebClient {
  readonly cookies = new Map<string, string>();
  csrf: string | null = null;

  /** Each client comes from an address of its own unless told otherwise (throttling is per address). */
  constructor(
    private readonly app: App,
    private readonly remoteAddress = `198.18.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`,
  ) {}

  private absorb(res: Response): Response {
    for (const cookie of res.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      const expired = cookie.value === '' || cookie.maxAge === 0 || (cookie.expires !== undefined && cookie.expires.getTime() <= Date.now());
      if (expired) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    const match = /name="_csrf" value="([^"]+)"/.exec(res.body);
    if (match && (res.headers['content-type'] ?? '').toString().startsWith('text/html')) this.csrf = match[1]!;
    return res;
  }

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async get(url: string): Promise<Response> {
    const res = await this.app.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader() }, remoteAddress: this.remoteAddress });
    return this.absorb(res);
  }

  /** Posts a form; the CSRF token is the last page's unless the form names its own (or null to send none). */
  async post(url: string, form: Record<string, string> = {}, options: { csrf?: string | null } = {}): Promise<Response> {
    const token = options.csrf === undefined ? this.csrf : options.csrf;
    const body = new URLSearchParams(token === null ? form : { _csrf: token, ...form }).toString();
    const res = await this.app.inject({
      method: 'POST',
      url,
      headers: { cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: body,
      remoteAddress: this.remoteAddress,
    });
    return this.absorb(res);
  }

  /**
   * Follows a form's 303 as a browser would: loads the Location (its #fragment stays in the
   * browser). Throws if the answer is not a redirect, so a form that stopped redirecting fails loudly.
   */
  async follow(res: Response): Promise<Response> {
    const location = res.headers.location;
    if (res.statusCode !== 303 || typeof location !== 'string') throw new Error(`expected a 303 redirect, got ${res.statusCode}`);
    return this.get(location.split('#')[0]!);
  }

  /**
   * Creates an API token as a browser does (loads the tokens page, sends its form, follows the
   * redirect) and answers the page that shows the new secret once.
   */
  async createToken(form: { name: string; kind?: string }): Promise<Response> {
    await this.get('/account/tokens');
    return this.follow(await this.post('/account/tokens', form));
  }

  async signUp(email: string, password = 'correct horse battery'): Promise<Response> {
    await this.get('/signup');
    return this.post('/signup', { email, password, terms: 'accepted' });
  }

  async logIn(email: string, password = 'correct horse battery'): Promise<Response> {
    await this.get('/login');
    return this.post('/login', { email, password });
  }
}

export function randomEmail(): string {
  return `customer-${Math.random().toString(36).slice(2, 10)}@example.com`;
}

/** The reset link in the newest outbox message to `email`. */
export function resetLinkFor(messages: string[], email: string): string {
  const message = [...messages].reverse().find((text) => text.includes(`To: ${email}`));
  if (!message) throw new Error(`no message to ${email} in the outbox`);
  const link = /https?:\/\/\S+\/reset-password\?token=\S+/.exec(message);
  if (!link) throw new Error('no reset link in the message');
  return link[0];
}
