import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createRepositories, type Repositories } from '../../../src/storage/repositories/index.ts';
import { lotsWrittenHooks } from '../../../src/container.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../support/databases.ts';
import { makeLot } from '../../support/fixtures.ts';
import { randomVin } from './helpers.ts';

const OBJECT = { ext: 'jpg' as const, contentType: 'image/jpeg', bytes: 1000, renditionBytes: 300, width: 640, height: 480 };
const hashOf = (n: number) => n.toString(16).padStart(64, '0');

describe.each(DIALECTS)('media repository (%s)', (dialect) => {
  let database: TestDatabase;
  let queueing: Repositories;

  beforeEach(async () => {
    database = await createTestDatabase(dialect);
    queueing = createRepositories(database.db, { lotsWritten: lotsWrittenHooks({ photoArchive: true }) });
  });
  afterEach(() => database.destroy());

  const urlsQueued = async () =>
    (await database.db.kysely.selectFrom('media_images').select(['url', 'host', 'state']).orderBy('id').execute()).map((row) => row.url);

  test('storing lots queues their image URLs in the lots\' order, once each; an unchanged lot queues nothing', async () => {
    const a = makeLot({ vin: randomVin(), lot_id: 1, images: ['https://cs.copart.test/a1.jpg', 'https://cs.copart.test/a2.jpg'] });
    const b = makeLot({ vin: randomVin(), lot_id: 2, images: ['https://img.iaai.test/b1.jpg', 'https://cs.copart.test/a1.jpg', 'not a url'] });
    await queueing.lots.upsertBatch([a, b]);
    expect(await urlsQueued()).toEqual(['https://cs.copart.test/a1.jpg', 'https://cs.copart.test/a2.jpg', 'https://img.iaai.test/b1.jpg']);

    await queueing.lots.upsertBatch([a, b]);
    expect(await urlsQueued()).toHaveLength(3);
    await queueing.lots.upsertBatch([{ ...a, images: [...a.images, 'https://cs.copart.test/a3.jpg'] }]);
    expect(await urlsQueued()).toEqual([
      'https://cs.copart.test/a1.jpg',
      'https://cs.copart.test/a2.jpg',
      'https://img.iaai.test/b1.jpg',
      'https://cs.copart.test/a3.jpg',
    ]);
    const status = await queueing.media.status();
    expect(status.hosts.map((h) => [h.host, h.queued])).toEqual([
      ['cs.copart.test', 3],
      ['img.iaai.test', 1],
    ]);
  });

  test('with the archive off nothing is queued; the queue commits or rolls back with the lots', async () => {
    await database.repos.lots.upsertBatch([makeLot({ vin: randomVin(), images: ['https://x.test/off.jpg'] })]);
    expect(await urlsQueued()).toEqual([]);
    await expect(
      database.db.kysely.transaction().execute(async (trx) => {
        await createRepositories({ ...database.db, kysely: trx }, { lotsWritten: lotsWrittenHooks({ photoArchive: true }) }).lots.upsertBatch([
          makeLot({ vin: randomVin(), images: ['https://x.test/rolled-back.jpg'] }),
        ]);
        throw new Error('the import failed after the batch');
      }),
    ).rejects.toThrow('the import failed');
    expect(await urlsQueued()).toEqual([]);
  });

  test('claims lease due images in queue order, skip leased and busy hosts, and take expired leases back', async () => {
    const images = ['https://h1.test/1.jpg', 'https://h2.test/2.jpg', 'https://h1.test/3.jpg', 'https://h1.test/4.jpg'];
    await queueing.lots.upsertBatch([makeLot({ vin: randomVin(), images })]);
    const now = new Date(Date.now() + 1000);
    const first = await queueing.media.claim('a', 2, 60_000, { now });
    expect(first.map((c) => c.url)).toEqual(images.slice(0, 2));
    const second = await queueing.media.claim('b', 10, 60_000, { now, skipHosts: ['h1.test'] });
    expect(second).toEqual([]);
    const third = await queueing.media.claim('b', 10, 120_000, { now });
    expect(third.map((c) => c.url)).toEqual(images.slice(2));
    // a died: its lease runs out and b takes its images.
    const later = await queueing.media.claim('b', 10, 60_000, { now: new Date(now.getTime() + 60_000) });
    expect(later.map((c) => c.url)).toEqual(images.slice(0, 2));
    // a's late answer no longer counts: the image is b's.
    await queueing.media.markArchived(first[0]!, 'a', { hash: hashOf(1), ...OBJECT });
    expect((await queueing.media.archivedByUrl([images[0]!])).size).toBe(0);
    await queueing.media.markArchived(later[0]!, 'b', { hash: hashOf(1), ...OBJECT });
    expect([...(await queueing.media.archivedByUrl(images))]).toEqual([[images[0], { hash: hashOf(1), ext: 'jpg' }]]);
    // Given back untried, an image is due again at once.
    await queueing.media.release([later[1]!], 'b');
    expect((await queueing.media.claim('c', 10, 60_000, { now })).map((c) => c.url)).toEqual([images[1]]);
  });

  test('concurrent claims never hand one image to two claimers', async () => {
    const images = Array.from({ length: 40 }, (_, i) => `https://h.test/${i}.jpg`);
    await queueing.lots.upsertBatch([makeLot({ vin: randomVin(), images })]);
    const now = new Date(Date.now() + 1000);
    const claims = await Promise.all(['a', 'b', 'c', 'd'].map((owner) => queueing.media.claim(owner, 15, 60_000, { now })));
    const ids = claims.flat().map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(40);
  });
});
