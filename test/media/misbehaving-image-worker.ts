import { REAL_IMAGE_WORK, serveImageJobs as serveRealJobs } from '../../src/media/image-worker.ts';

/**
 * An image worker for the tests of image-process.ts and the archiver: it does the real work, except
 * for a photo whose bytes end with a marker. `CRASH` makes the child exit as a decoder crash would
 * when the photo is checked; `HANG!` gets no answer, as a photo that keeps libvips busy for ever.
 */
export const CRASH = Buffer.from('CRASH');
export const HANG = Buffer.from('HANG!');

export function serveImageJobs(): void {
  serveRealJobs({
    ...REAL_IMAGE_WORK,
    check: (bytes) => {
      const tail = bytes.subarray(-5);
      if (tail.equals(CRASH)) process.exit(3);
      if (tail.equals(HANG)) return new Promise(() => {});
      return REAL_IMAGE_WORK.check(bytes);
    },
  });
}
