import { describe, expect, test } from 'vitest';
import { PasswordHasher } from '../../src/accounts/password-hasher.ts';
import { TEST_SCRYPT } from '../support/customer-app.ts';

describe('password hashes', () => {
  test('password hashes: scrypt, salted, self-describing; a hash of another cost still verifies and asks to be redone', async () => {
    const hasher = new PasswordHasher(TEST_SCRYPT);
    const [one, two] = await Promise.all([hasher.hash('pässword one'), hasher.hash('pässword one')]);
    expect(one).not.toBe(two);
    expect(await hasher.verify('pässword one', one)).toBe(true);
    // Unicode is normalised: the same characters typed another way verify.
    expect(await hasher.verify('pa\u0308ssword one', one)).toBe(true);
    expect(await hasher.verify('password one', one)).toBe(false);
    expect(await hasher.verify('pässword one', 'not a hash')).toBe(false);
    const stronger = new PasswordHasher({ N: 2048, r: 8, p: 1 });
    expect(stronger.needsRehash(one)).toBe(true);
    expect(await stronger.verify('pässword one', one)).toBe(true);
    expect(hasher.needsRehash(one)).toBe(false);
    expect(new PasswordHasher().needsRehash(one)).toBe(true);
    expect(await new PasswordHasher().hash('x'.repeat(10))).toMatch(/^scrypt\$32768\$8\$3\$/);
  });
});
