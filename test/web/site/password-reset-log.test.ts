import { readdirSync, readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { MemoryRateLimiter } from '../../../src/limits/rate/memory-rate-limiter.ts';
import { buildAppOn, testConfig } from '../../support/app.ts';
import { memoryLog } from '../../support/memory-log.ts';
import { createTestDatabase } from '../../support/databases.ts';
import { randomEmail, resetLinkFor, TEST_SCRYPT, WebClient } from '../../support/customer-app.ts';

describe('the password reset and the request log', () => {
  test('the whole reset flow leaves no reset token, password or session id in the request log', async () => {
    const database = await createTestDatabase('sqlite');
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vinhistory-log-'));
    const { lines, logger } = memoryLog();
    const app = await buildAppOn({
      config: testConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'info' }),
      db: database.db,
      rateLimiter: new MemoryRateLimiter(),
      loggerInstance: logger,
      overrides: { passwordCost: TEST_SCRYPT },
    });
    try {
      const email = randomEmail();
      const browser = new WebClient(app);
      await browser.signUp(email, 'first secret passphrase');
      await browser.get('/forgot-password');
      await browser.post('/forgot-password', { email });
      await app.services.mailDelivery.drain();
      const messages = readdirSync(path.join(dataDir, 'outbox')).map((file) => readFileSync(path.join(dataDir, 'outbox', file), 'utf8'));
      const link = new URL(resetLinkFor(messages, email));
      const token = link.searchParams.get('token')!;
      await browser.get(link.pathname + link.search);
      await browser.post('/reset-password', { token, password: 'second secret passphrase' });
      expect((await browser.get('/account')).statusCode).toBe(200);
      const log = lines.join('\n');
      expect(log).toContain('incoming request');
      for (const secret of [token, 'first secret passphrase', 'second secret passphrase', browser.cookies.get('vh_session')!.split('.')[0]!]) {
        expect(log).not.toContain(secret);
      }
    } finally {
      await app.close();
      await database.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
