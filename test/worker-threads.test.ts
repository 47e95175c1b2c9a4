import { readFileSync } from 'node:fs';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { CHRT } from '../src/linux-tools.ts';
import { startModuleWorker, withThreadPriority } from '../src/worker-threads.ts';

interface Priority {
  niceness: number;
  policy: number | null;
}

const SCHED_OTHER = 0;
const SCHED_IDLE = 5;

/** The priority of a worker's own thread and of a thread that worker starts (test/support/thread-priority-worker.ts). */
async function priorityOfWorker(): Promise<{ own: Priority; started: Priority }> {
  const worker = startModuleWorker(import.meta.url, 'support/thread-priority-worker');
  try {
    return await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  } finally {
    await worker.terminate();
  }
}

function ownPolicy(): number {
  return Number(/^policy\s*:\s*(\d+)/m.exec(readFileSync('/proc/thread-self/sched', 'utf8'))![1]);
}

describe.runIf(process.platform === 'linux')('startModuleWorker: the priority of a background thread', () => {
  it('a thread started within a niceness lowers its own priority, and only its own; threads it starts inherit it', async () => {
    const own = os.getPriority();
    const niced = await withThreadPriority({ idle: false, niceness: 19 }, () => priorityOfWorker());
    expect(niced.own.niceness).toBe(19);
    expect(niced.started.niceness).toBe(19);
    expect(os.getPriority()).toBe(own);
    expect((await priorityOfWorker()).own.niceness).toBe(own);
  });

  // The kernel's sched file (CONFIG_SCHED_DEBUG) names the policy; chrt sets it.
  const canSee = CHRT !== null && /^policy/m.test(readFileSync('/proc/thread-self/sched', 'utf8'));
  it.runIf(canSee)('a thread started within idle runs under SCHED_IDLE, and so do the threads it starts; the caller does not', async () => {
    const before = ownPolicy();
    const idle = await withThreadPriority({ idle: true, niceness: 19 }, () => priorityOfWorker());
    expect(idle.own.policy).toBe(SCHED_IDLE);
    expect(idle.started.policy).toBe(SCHED_IDLE);
    // The niceness too, which the thread keeps should it ever leave SCHED_IDLE.
    expect(idle.own.niceness).toBe(19);
    expect(ownPolicy()).toBe(before);
    expect((await priorityOfWorker()).own.policy).toBe(SCHED_OTHER);
  });
});
