import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLot, validVin } from '../support/fixtures.ts';
import { makeImage, startImageServer, type ImageServer } from '../support/image-server.ts';
import { makeDataDir, runCli, runCliInProcess } from './run-cli.ts';

describe('vinhistory media', () => {
  const data = makeDataDir();
  let photos: ImageServer;
  const on = () => ({ MEDIA_ARCHIVE: 'directory', OUTBOUND_ALLOW_PRIVATE: 'true' });

  beforeAll(async () => {
    photos = await startImageServer();
    photos.set('/a.jpg', await makeImage('jpeg', 1, { width: 100, height: 80 }));
    photos.set('/b.png', await makeImage('png', 2, { width: 100, height: 80 }), 'image/png');
  });
  afterAll(async () => {
    await photos.close();
    data.remove();
  });

  it('says the archive is off, and refuses to archive or delete then', async () => {
    const status = await runCliInProcess(['media', 'status'], { dataDir: data.dir });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('archive: off\nqueued 0, retrying 0, archived 0, failed 0, removed 0\n');
    const archive = await runCliInProcess(['media', 'archive'], { dataDir: data.dir });
    expect(archive.code).toBe(1);
    expect(archive.stderr).toContain('the photo archive is off: set MEDIA_ARCHIVE=directory');
  });

  it('backfills lots imported while it was off, archives them, reports per host, and deletes a lot\'s photos', async () => {
    const lots = [
      makeLot({ vin: validVin('1HGCM82633A00501'), lot_id: 501, images: [`${photos.base}/a.jpg`, `${photos.base}/missing.jpg`] }),
      makeLot({ vin: validVin('1HGCM82633A00502'), lot_id: 502, images: [`${photos.base}/b.png`] }),
    ];
    const file = data.file('lots.ndjson', lots.map((lot) => JSON.stringify(lot)).join('\n'));
    expect((await runCliInProcess(['import', '--no-progress', file], { dataDir: data.dir })).code).toBe(0);

    // The real binary: it fetches and stores the photos, then exits on its own (no fetch, timer or
    // worker left behind); the other commands run in-process.
    const archive = await runCli(['media', 'archive', '--json'], { dataDir: data.dir, env: on() });
    expect(archive.stderr).toBe('');
    expect(archive.code).toBe(0);
    // The same terms as `media status` below: the 404 failed one attempt and is retrying, not failed.
    expect(JSON.parse(archive.stdout)).toMatchObject({ queued: 3, archived: 2, deduplicated: 0, retrying: 1, failed: 0 });
    expect(existsSync(path.join(data.dir, 'media'))).toBe(true);

    const status = await runCliInProcess(['media', 'status'], { dataDir: data.dir, env: on() });
    expect(status.stdout).toContain('archive: directory\nqueued 0, retrying 1, archived 2, failed 0, removed 0\n');
    expect(status.stdout).toMatch(/^127\.0\.0\.1\s+0\s+1\s+2\s+0\s+\d/m);
    expect(status.stdout).toContain(`${photos.base}/missing.jpg: HTTP 404 (attempt 1)`);

    // Nothing new: a second run queues and fetches nothing (the 404 waits for its pause).
    const again = JSON.parse((await runCliInProcess(['media', 'archive', '--json'], { dataDir: data.dir, env: on() })).stdout);
    expect(again).toMatchObject({ queued: 0, archived: 0, retrying: 0, failed: 0 });
    expect(photos.hits.get('/a.jpg')).toBe(1);

    const removed = await runCliInProcess(['media', 'delete', '--lot', 'copart:501'], { dataDir: data.dir, env: on() });
    expect(removed.code).toBe(0);
    expect(removed.stdout).toBe('removed 2 photos of copart:501 from the archive; 3 files deleted\n');
    expect((await runCliInProcess(['media', 'delete', '--lot', 'nonsense'], { dataDir: data.dir, env: on() })).code).toBe(2);
  });
});
