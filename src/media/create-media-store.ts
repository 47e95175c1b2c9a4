import type { MediaStoreConfig } from '../config.ts';
import type { MediaStore } from './media-store.ts';
import { DirectoryStore } from './stores/directory-store.ts';
import { S3Store } from './stores/s3-store.ts';

export function createMediaStore(config: MediaStoreConfig): MediaStore {
  return config.kind === 'directory' ? new DirectoryStore(config.dir) : new S3Store(config);
}
