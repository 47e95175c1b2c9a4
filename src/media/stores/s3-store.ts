import type { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import type { MediaStoreConfig } from '../../config.ts';
import { assertMediaKey, type ByteRange, type MediaStore, type StoredBody } from '../media-store.ts';

type S3Config = Extract<MediaStoreConfig, { kind: 's3' }>;

/** Served photos never change under their name: caches (and a CDN in front of the bucket) keep them. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

function isNotFound(error: unknown): boolean {
  if (!(error instanceof S3ServiceException)) return false;
  return error.name === 'NotFound' || error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404;
}

/**
 * Photos in an S3-compatible bucket (AWS S3, MinIO, Cloudflare R2, Backblaze B2), for several
 * instances sharing one archive. Checksums are sent and checked only where the API requires them:
 * the SDK's default since 2025 (a CRC32 trailer on every upload) is refused by several
 * S3-compatible services, and the archive checks each photo by its sha256 anyway.
 */
export class S3Store implements MediaStore {
  readonly kind = 's3' as const;
  private readonly client: S3Client;

  constructor(private readonly config: S3Config) {
    this.client = new S3Client({
      region: config.region,
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      forcePathStyle: config.forcePathStyle,
      ...(config.credentials
        ? { credentials: { accessKeyId: config.credentials.accessKeyId, secretAccessKey: config.credentials.secretAccessKey } }
        : {}),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
    });
  }

  private keyOf(key: string): string {
    assertMediaKey(key);
    return `${this.config.prefix}${key}`;
  }

  async put(key: string, bytes: Buffer, contentType: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.config.bucket,
        Key: this.keyOf(key),
        Body: bytes,
        ContentLength: bytes.length,
        ContentType: contentType,
        CacheControl: IMMUTABLE,
      }),
    );
  }

  async stat(key: string): Promise<{ size: number } | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.config.bucket, Key: this.keyOf(key) }));
      return { size: Number(head.ContentLength ?? 0) };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<StoredBody | null> {
    try {
      const answer = await this.client.send(
        new GetObjectCommand({
          Bucket: this.config.bucket,
          Key: this.keyOf(key),
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      // With a range the total is after the slash of Content-Range (`bytes 0-99/1234`).
      const total = range ? Number(/\/(\d+)$/.exec(answer.ContentRange ?? '')?.[1] ?? Number.NaN) : Number(answer.ContentLength);
      if (!Number.isFinite(total)) throw new Error(`the bucket answered no size for ${key}`);
      return { size: total, body: answer.Body as Readable };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: this.keyOf(key) }));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
