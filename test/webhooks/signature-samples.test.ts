import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signatureHeader } from '../../src/webhooks/signing.ts';

/**
 * The signature checks docs/webhooks.md shows, run as a receiver would run them, on a body signed
 * by the service's own signing code: a good signature passes (with one secret or, during a
 * rotation, either of two), a wrong secret, an altered body and an old timestamp fail.
 */
const sample = (name: string) => fileURLToPath(new URL(`../../docs/webhook-samples/${name}`, import.meta.url));
// On CI (.ci/run installs python3 and php-cli) a missing interpreter is a failure, never a skip.
const has = (command: string) => process.env.CI === 'true' || spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;

const RUNNERS = [
  { language: 'JavaScript', command: process.execPath, file: 'verify.mjs', available: true },
  { language: 'Python', command: 'python3', file: 'verify.py', available: has('python3') },
  { language: 'PHP', command: 'php', file: 'verify.php', available: has('php') },
];

describe.each(RUNNERS)('the $language signature check of docs/webhooks.md', ({ command, file, available }) => {
  const run = (signature: string, body: string, secret: string) =>
    execFileSync(command, [sample(file)], { input: body, env: { PATH: process.env.PATH ?? '', SIGNATURE: signature, WEBHOOK_SECRET: secret } }).toString().trim();

  it.runIf(available)('accepts the service signature and refuses a wrong secret, an altered body or an old timestamp', () => {
    const secret = newWebhookSecret();
    const previous = newWebhookSecret();
    const body = JSON.stringify({ id: 'evt_0123456789abcdef', type: 'lot.updated', created_at: new Date().toISOString(), data: { vin: '4JGBF7BE5AA585531', changed: ['price'], note: 'ünïcode ✓' } });
    const now = Math.floor(Date.now() / 1000);
    expect(run(signatureHeader([secret], now, body), body, secret)).toBe('valid');
    expect(run(signatureHeader([secret, previous], now, body), body, previous)).toBe('valid');
    expect(run(signatureHeader([secret], now, body), body, newWebhookSecret())).toBe('invalid');
    expect(run(signatureHeader([secret], now, body), body.replace('price', 'odometer'), secret)).toBe('invalid');
    expect(run(signatureHeader([secret], now - 3600, body), body, secret)).toBe('invalid');
  });
});
