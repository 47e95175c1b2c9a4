import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { assertMediaKey, type ByteRange, type MediaStore, type StoredBody } from '../media-store.ts';

/**
 * Photos as files under one directory (MEDIA_DIR, DATA_DIR/media by default), spread over two
 * levels of folders by the hash's first four characters (`ab/cd/abcd...`) so that no folder holds
 * more than a few thousand files. A file is written under a temporary name and renamed into place,
 * so a reader never sees half a photo, and a crash leaves no torn file under a real name.
 */
export class DirectoryStore implements MediaStore {
  readonly kind = 'directory' as const;

  constructor(private readonly root: string) {}

  private pathOf(key: string): string {
    assertMediaKey(key);
    return path.join(this.root, key.slice(0, 2), key.slice(2, 4), key);
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    const target = this.pathOf(key);
    await fs.mkdir(path.dirname(target), { recursive: true });
    const temporary = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await fs.writeFile(temporary, bytes, { mode: 0o644 });
      await fs.rename(temporary, target);
    } catch (error) {
      await fs.rm(temporary, { force: true });
      throw error;
    }
  }

  async stat(key: string): Promise<{ size: number } | null> {
    try {
      const stats = await fs.stat(this.pathOf(key));
      return { size: stats.size };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<StoredBody | null> {
    const file = this.pathOf(key);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(file, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    // The size and the bytes come from one open file: a concurrent delete cannot split them.
    const { size } = await handle.stat();
    const body = handle.createReadStream(range ? { start: range.start, end: range.end } : {});
    return { size, body };
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.pathOf(key), { force: true });
  }

  async close(): Promise<void> {}
}
