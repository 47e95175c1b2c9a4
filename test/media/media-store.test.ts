import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DirectoryStore } from '../../src/media/stores/directory-store.ts';
import { S3Store } from '../../src/media/stores/s3-store.ts';
import { testConfig } from '../support/app.ts';
import { startLocalS3 } from '../support/s3-server.ts';
import { mediaStoreContract } from './media-store-contract.ts';

mediaStoreContract('directory', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vinhistory-store-'));
  return { store: new DirectoryStore(dir), close: async () => rmSync(dir, { recursive: true, force: true }) };
});

mediaStoreContract('s3 (a local S3-protocol server)', async () => {
  const s3 = await startLocalS3();
  // Configured as an operator would, through the environment.
  const config = testConfig({
    MEDIA_ARCHIVE: 's3',
    S3_BUCKET: s3.bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    S3_FORCE_PATH_STYLE: 'true',
    S3_PREFIX: 'photos/',
  });
  if (config.media.store?.kind !== 's3') throw new Error('expected the s3 store');
  return { store: new S3Store(config.media.store), close: () => s3.close() };
});
