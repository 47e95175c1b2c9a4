import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { startModuleWorker, withThreadNiceness } from '../src/worker-threads.ts';

async function nicenessOfWorker(): Promise<number> {
  const worker = startModuleWorker(import.meta.url, 'support/thread-niceness-worker');
  try {
    return await new Promise<number>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  } finally {
    await worker.terminate();
  }
}

describe.runIf(process.platform === 'linux')('startModuleWorker: the niceness of a background thread', () => {
  it('a thread started within withThreadNiceness lowers its own priority, and only its own', async () => {
    const own = os.getPriority();
    expect(await withThreadNiceness(19, () => nicenessOfWorker())).toBe(19);
    expect(os.getPriority()).toBe(own);
    expect(await nicenessOfWorker()).toBe(own);
  });
});
