import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export interface ScryptCost {
  /** CPU/memory cost, a power of two. */
  N: number;
  r: number;
  p: number;
}

/**
 * OWASP's scrypt setting of equal strength to N=2^17,r=8,p=1 with a quarter of the memory
 * (32 MiB per hash): several log-ins at once on a small server must not exhaust it.
 * About 350 ms of CPU per hash on the reference machine.
 */
export const DEFAULT_SCRYPT_COST: ScryptCost = Object.freeze({ N: 2 ** 15, r: 8, p: 3 });

const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

function derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const options: ScryptOptions = { N: cost.N, r: cost.r, p: cost.p, maxmem: 256 * cost.N * cost.r + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/**
 * Passwords hashed with scrypt (Node's crypto, run off the event loop in libuv's pool). The stored
 * string names its parameters, `scrypt$N$r$p$salt$hash` (base64url), so that the cost can be
 * raised later and old hashes still verify (and are re-hashed at the next log-in).
 */
export class PasswordHasher {
  constructor(private readonly cost: ScryptCost = DEFAULT_SCRYPT_COST) {}

  async hash(password: string): Promise<string> {
    const salt = randomBytes(SALT_LENGTH);
    const key = await derive(password, salt, this.cost);
    const { N, r, p } = this.cost;
    return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
  }

  async verify(password: string, stored: string): Promise<boolean> {
    const parsed = parse(stored);
    if (!parsed) return false;
    const key = await derive(password, parsed.salt, parsed.cost);
    return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
  }

  /** True when the hash was made with other parameters than today's. */
  needsRehash(stored: string): boolean {
    const parsed = parse(stored);
    return !parsed || parsed.cost.N !== this.cost.N || parsed.cost.r !== this.cost.r || parsed.cost.p !== this.cost.p;
  }

  /**
   * Spends the time of one verification, for a log-in with an unknown email: the answer then takes
   * as long as for a known one, and the timing does not tell which emails have accounts.
   */
  async burn(password: string): Promise<void> {
    await derive(password, randomBytes(SALT_LENGTH), this.cost);
  }
}

function parse(stored: string): { cost: ScryptCost; salt: Buffer; key: Buffer } | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0) || (N & (N - 1)) !== 0) return null;
  return { cost: { N, r, p }, salt: Buffer.from(parts[4]!, 'base64url'), key: Buffer.from(parts[5]!, 'base64url') };
}
