import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * Endpoint signing secrets must be read back to sign every delivery, so they cannot be stored as
 * hashes: they are sealed with AES-256-GCM under a key of the deployment (WEBHOOK_SECRET_KEY, or
 * one generated once and kept in the settings table, like the cookie secret). A copy of the
 * database alone then does not give the secrets away when the operator keeps the key apart
 * (docs/decisions.md). Each box names its key by a fingerprint, so a changed key is reported as
 * such, never as a corrupt box.
 */
const VERSION = 'v1';
const IV_BYTES = 12;

export class SecretBox {
  private readonly key: Buffer;
  readonly keyId: string;

  constructor(keyMaterial: string) {
    // A key of any length and alphabet becomes 32 bytes; the purpose keeps it apart from other uses of the same material.
    this.key = createHmac('sha256', keyMaterial).update('vinhistory webhook secret box v1').digest();
    this.keyId = createHash('sha256').update(this.key).digest('hex').slice(0, 8);
  }

  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, this.keyId, iv.toString('base64url'), sealed.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  }

  open(box: string): string {
    const [version, keyId, iv, sealed, tag] = box.split('.');
    if (version !== VERSION || !iv || sealed === undefined || !tag) throw new Error('not a sealed webhook secret');
    if (keyId !== this.keyId) throw new Error(`webhook secret sealed with another key (${keyId}); this deployment's key is ${this.keyId}`);
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/** Key material for a deployment that set no WEBHOOK_SECRET_KEY: 256 random bits. */
export function newSecretBoxKey(): string {
  return randomBytes(32).toString('base64url');
}
