import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { generateApiToken, hashApiToken, looksLikeApiToken, TEST_TOKEN_PREFIX, TOKEN_PREFIX, tokenFromAuthorization } from '../../src/domain/api-token.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('generateApiToken', () => {
  test('vh_live_ and 32 base62 characters: 62^32 is about 2^190, well over 128 bits', () => {
    const { token } = generateApiToken();
    expect(TOKEN_PREFIX).toBe('vh_live_');
    expect(token).toMatch(/^vh_live_[0-9A-Za-z]{32}$/);
    expect(32 * Math.log2(62)).toBeGreaterThan(190);
  });

  test('the secret part is random: no repeats, every base62 character and every position varies', () => {
    const secrets = Array.from({ length: 500 }, () => generateApiToken().token.slice(TOKEN_PREFIX.length));
    expect(new Set(secrets).size).toBe(500);
    expect(new Set(secrets.join('')).size).toBe(62);
    for (let position = 0; position < 32; position++) {
      // 500 draws from 62 symbols: far more than 30 distinct ones unless the position is fixed or skewed.
      expect(new Set(secrets.map((s) => s[position])).size, `position ${position}`).toBeGreaterThan(30);
    }
    // Roughly uniform: no character is more than twice as frequent as it should be.
    const counts = new Map<string, number>();
    for (const char of secrets.join('')) counts.set(char, (counts.get(char) ?? 0) + 1);
    const expected = (500 * 32) / 62;
    for (const char of BASE62) expect(counts.get(char) ?? 0, char).toBeLessThan(expected * 2);
  });

  test('the hash is the SHA-256 of the whole token in hex; the display prefix is not the secret', () => {
    const { token, hash, displayPrefix } = generateApiToken();
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toBe(createHash('sha256').update(token, 'utf8').digest('hex'));
    expect(hashApiToken(token)).toBe(hash);
    expect(displayPrefix).toBe(token.slice(0, 12));
    expect(displayPrefix.length).toBeLessThan(token.length);
  });
});

describe('sandbox tokens', () => {
  test('vh_test_ and 32 base62 characters, random like live ones, told apart by the prefix alone', () => {
    expect(TEST_TOKEN_PREFIX).toBe('vh_test_');
    const { token, hash, displayPrefix } = generateApiToken('test');
    expect(token).toMatch(/^vh_test_[0-9A-Za-z]{32}$/);
    expect(hash).toBe(createHash('sha256').update(token, 'utf8').digest('hex'));
    expect(displayPrefix).toBe(token.slice(0, 12));
    expect(new Set(Array.from({ length: 200 }, () => generateApiToken('test').token)).size).toBe(200);
    expect(looksLikeApiToken(token)).toBe(true);
    expect(tokenFromAuthorization(token)).toBe(token);
    expect(tokenFromAuthorization(`Bearer ${token}`)).toBe(token);
    expect(tokenFromAuthorization(`${token} ${generateApiToken().token}`)).toBeNull();
    expect(looksLikeApiToken(token.replace('vh_test_', 'vh_TEST_'))).toBe(false);
  });
});

describe('hashApiToken', () => {
  test('is deterministic and tells tokens apart', () => {
    const a = 'vh_live_0123456789abcdefghijABCDEFGHIJ01';
    expect(hashApiToken(a)).toBe(hashApiToken(a));
    expect(hashApiToken(a)).not.toBe(hashApiToken(`${a.slice(0, -1)}2`));
    expect(hashApiToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('looksLikeApiToken', () => {
  test('the exact shape only', () => {
    const { token } = generateApiToken();
    expect(looksLikeApiToken(token)).toBe(true);
    expect(looksLikeApiToken(token.toUpperCase())).toBe(false);
    expect(looksLikeApiToken(token.slice(0, -1))).toBe(false);
    expect(looksLikeApiToken(`${token}x`)).toBe(false);
    expect(looksLikeApiToken(`${token.slice(0, -1)}_`)).toBe(false);
    expect(looksLikeApiToken(` ${token}`)).toBe(false);
  });
});

describe('tokenFromAuthorization', () => {
  const { token } = generateApiToken();

  test.each([
    ['the bare token (the documented form)', token],
    ['Bearer', `Bearer ${token}`],
    ['bearer', `bearer ${token}`],
    ['BEARER', `BEARER ${token}`],
    ['Bearer with extra spaces', `Bearer    ${token}`],
    ['surrounding whitespace', `  ${token}  `],
    ['Bearer with a tab', `Bearer\t${token}`],
  ])('accepts %s', (_name, header) => {
    expect(tokenFromAuthorization(header)).toBe(token);
  });

  test.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['whitespace', '   '],
    ['Basic credentials', 'Basic dXNlcjpwYXNzd29yZA=='],
    ['the token under Basic', `Basic ${token}`],
    ['another scheme', `Token ${token}`],
    ['Bearer alone', 'Bearer'],
    ['Bearer and a space', 'Bearer '],
    ['garbage', 'hello world'],
    ['a truncated token', token.slice(0, -1)],
    ['a token of the wrong prefix', token.replace('vh_live_', 'vh_prod_')],
    ['an operator token', token.replace('vh_live_', 'vh_op_')],
    ['two tokens', `${token} ${token}`],
    ['two tokens after Bearer', `Bearer ${token} ${token}`],
    ['two tokens separated by a comma', `${token},${token}`],
    ['Bearer without a space', `Bearer${token}`],
  ])('rejects %s', (_name, header) => {
    expect(tokenFromAuthorization(header)).toBeNull();
  });
});
