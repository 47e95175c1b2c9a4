import { createHash } from 'node:crypto';
import { checkImage, makeRenditions, type ImageCheck, type Renditions } from './image-check.ts';

/**
 * The child half of the archive's image work (image-process.ts starts it, at a low CPU priority):
 * checks a photo's bytes, hashes them and makes its renditions, one job at a time, so that the
 * decoding and encoding never compete on equal terms with the server's event loop.
 */
export type ImageJob = { id: number; op: 'check'; bytes: Uint8Array } | { id: number; op: 'renditions'; bytes: Uint8Array };

export type ImageAnswer =
  | { id: number; ok: true; check: ImageCheck; hash: string }
  | { id: number; ok: true; renditions: { thumb: Uint8Array; display: Uint8Array } }
  | { id: number; ok: false; message: string };

/** What a check answers: whether sharp reads the photo, and the SHA-256 that names its content. */
export interface CheckedImage {
  check: ImageCheck;
  hash: string;
}

export async function runImageJob(job: ImageJob): Promise<ImageAnswer> {
  // Structured clone hands a Buffer over as a plain Uint8Array: the same bytes, no copy.
  const bytes = Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength);
  try {
    if (job.op === 'check') {
      const check = await checkImage(bytes);
      return { id: job.id, ok: true, check, hash: createHash('sha256').update(bytes).digest('hex') };
    }
    const renditions: Renditions = await makeRenditions(bytes);
    return { id: job.id, ok: true, renditions };
  } catch (error) {
    return { id: job.id, ok: false, message: (error as Error).message };
  }
}

/**
 * The child's loop (image-process.ts's bootstrap calls it once the module is loaded): answers each
 * job as it comes; the parent sends the next only after the answer.
 */
export function serveImageJobs(run: (job: ImageJob) => Promise<ImageAnswer> = runImageJob): void {
  const send = process.send?.bind(process);
  if (!send) throw new Error('the image worker runs as a child process with an IPC channel');
  process.on('message', (job: ImageJob) => {
    void run(job).then((answer) => send(answer));
  });
  // The process that started this child is gone (killed outright) or closed it: nothing is left to answer.
  process.on('disconnect', () => process.exit(0));
  send({ ready: true });
}
