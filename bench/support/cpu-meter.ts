import type { Child } from './children.ts';

export interface Measured<T> {
  result: T;
  /** CPU the server used during the measured part, in cores (1 = one core busy all the time). */
  cores: number | null;
}

/**
 * Runs a load and measures the CPU its server used from the moment `startMeter` is called (after
 * any warm-up) to the end: a server that answers slowly while using less than a core is waiting
 * on something (the disk, a lock), not computing.
 */
export async function withCpu<T>(child: Child, run: (startMeter: () => Promise<void>) => Promise<T>): Promise<Measured<T>> {
  let start: { cpu: number | null; at: number } | null = null;
  const result = await run(async () => {
    start = { cpu: await child.cpuSeconds(), at: performance.now() };
  });
  const endCpu = await child.cpuSeconds();
  const endAt = performance.now();
  const from = start as { cpu: number | null; at: number } | null;
  const cores = from && from.cpu !== null && endCpu !== null ? (endCpu - from.cpu) / ((endAt - from.at) / 1000) : null;
  return { result, cores };
}

