import { calculateJwkThumbprint, exportJWK, exportPKCS8, generateKeyPair, importJWK, importPKCS8, type CryptoKey, type JWK } from 'jose';
import type { ReportSignaturesRepository, StoredSigningKey } from '../storage/repositories/report-signatures-repository.ts';
import type { SecretKeeper } from '../webhooks/secret-keeper.ts';

/** The JWS algorithm of report signatures: Ed25519 (RFC 8037), named EdDSA as the contract fixes it. */
export const SIGNING_ALG = 'EdDSA' as const;

/** A key as the operator sees it (`vinhistory keys list`): never its private half. */
export interface SigningKeyInfo {
  kid: string;
  createdAt: string;
  current: boolean;
}

/** A public key as /.well-known/jwks.json publishes it. */
export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: typeof SIGNING_ALG;
  use: 'sig';
}

/** How long an instance signs with the key it read before it looks again: a rotation by the CLI reaches every server within it. */
const CURRENT_TTL_MS = 60_000;

/**
 * The service's report signing keys: Ed25519, made on first start (or first need), the private half
 * sealed by the deployment's SecretKeeper (the webhook secrets' box) and never stored in the clear.
 * A rotation makes a new current key; the old ones stay, published and verifying what they signed.
 * A key's id is its RFC 7638 thumbprint, so anyone can check that a kid names the key it claims.
 */
export class SigningKeys {
  private current: { key: Promise<{ kid: string; key: CryptoKey }>; readAt: number } | null = null;
  private readonly publicKeys = new Map<string, Promise<CryptoKey>>();

  constructor(
    private readonly options: {
      repo: ReportSignaturesRepository;
      secrets: SecretKeeper;
      now?: () => Date;
    },
  ) {}

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** The current key's id, made first when there is none (server start). */
  async ensure(): Promise<string> {
    return (await this.signer()).kid;
  }

  /** A new current key; every earlier one stays published. */
  async rotate(): Promise<SigningKeyInfo> {
    const made = await this.make();
    this.current = null;
    return { kid: made.id, createdAt: made.createdAt, current: true };
  }

  async list(): Promise<SigningKeyInfo[]> {
    const keys = await this.options.repo.listKeys();
    return keys.map((key, i) => ({ kid: key.id, createdAt: key.createdAt, current: i === 0 }));
  }

  /** The JWK Set of every key, newest first. */
  async jwks(): Promise<{ keys: PublicJwk[] }> {
    const keys = await this.options.repo.listKeys();
    return { keys: keys.map((key) => JSON.parse(key.publicJwk) as PublicJwk) };
  }

  /** The key a signature names, or null when the service has no such key. */
  async publicKey(kid: string): Promise<CryptoKey | null> {
    let key = this.publicKeys.get(kid);
    if (!key) {
      const stored = (await this.options.repo.listKeys()).find((k) => k.id === kid);
      if (!stored) return null;
      const imported = importJWK(JSON.parse(stored.publicJwk) as JWK, SIGNING_ALG) as Promise<CryptoKey>;
      this.publicKeys.set(kid, imported);
      imported.catch(() => this.publicKeys.delete(kid));
      key = imported;
    }
    return key;
  }

  /** The key that signs now: the newest, read again after a minute. */
  async signer(): Promise<{ kid: string; key: CryptoKey }> {
    const at = Date.now();
    if (!this.current || at - this.current.readAt > CURRENT_TTL_MS) {
      const key = this.loadCurrent();
      this.current = { key, readAt: at };
      key.catch(() => {
        if (this.current?.key === key) this.current = null;
      });
    }
    return this.current.key;
  }

  private async loadCurrent(): Promise<{ kid: string; key: CryptoKey }> {
    const stored = (await this.options.repo.currentKey()) ?? (await this.make());
    const pem = await this.options.secrets.open(stored.privateSealed);
    return { kid: stored.id, key: await importPKCS8(pem, SIGNING_ALG) };
  }

  private async make(): Promise<StoredSigningKey> {
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { crv: 'Ed25519', extractable: true });
    const jwk = await exportJWK(publicKey);
    if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || !jwk.x) throw new Error('jose made a key that is not Ed25519');
    const kid = await calculateJwkThumbprint(jwk);
    const stored: StoredSigningKey = {
      id: kid,
      publicJwk: JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid, alg: SIGNING_ALG, use: 'sig' } satisfies PublicJwk),
      privateSealed: await this.options.secrets.seal(await exportPKCS8(privateKey)),
      createdAt: this.now().toISOString(),
    };
    await this.options.repo.insertKey(stored);
    return stored;
  }
}
