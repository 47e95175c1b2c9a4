import autocannon from 'autocannon';
import { summariseLatencies, type LatencySummary } from './latencies.ts';

export interface ThroughputOptions {
  /** Base URL of the server, e.g. http://127.0.0.1:3000 */
  url: string;
  connections: number;
  durationSeconds: number;
  /** Run this long first and throw the figures away (JIT, caches, connection setup). */
  warmupSeconds: number;
  /** The path of the next request (called once per request). */
  path: () => string;
  headers: Record<string, string>;
  /** Called after the warm-up, just before the measured run starts. */
  onMeasuredRunStart?: () => Promise<void>;
}

export interface ThroughputResult {
  /** Mean of the per-second request counts, as autocannon reports it. */
  requestsPerSecond: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Response bytes (headers and body) per request, on average. */
  bytesPerResponse: number;
  latency: LatencySummary;
}

/** Closed loop: each connection sends its next request as soon as the last one is answered. */
export async function measureThroughput(options: ThroughputOptions): Promise<ThroughputResult> {
  if (options.warmupSeconds > 0) await run(options, options.warmupSeconds, null);
  await options.onMeasuredRunStart?.();
  const samples: number[] = [];
  const result = await run(options, options.durationSeconds, samples);
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stats.count ?? 0;
  return {
    requestsPerSecond: result.requests.average,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    bytesPerResponse: result.requests.total > 0 ? result.throughput.total / result.requests.total : 0,
    // autocannon's own histogram has a resolution of 1 ms, too coarse for sub-millisecond
    // answers; its response event carries the exact time of each request.
    latency: summariseLatencies(samples),
  };
}

let current: autocannon.Instance | null = null;

/** Stops a run in progress (Ctrl-C); its promise then resolves with what was measured. */
export function stopThroughputRun(): void {
  current?.stop();
}

function run(options: ThroughputOptions, durationSeconds: number, samples: number[] | null): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        duration: durationSeconds,
        headers: options.headers,
        requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: options.path() }) }],
      },
      (error, result) => {
        current = null;
        if (error) reject(error instanceof Error ? error : new Error(String(error)));
        else resolve(result);
      },
    );
    current = instance;
    if (samples) {
      instance.on('response', (_client, statusCode, _bytes, responseTime) => {
        if (statusCode >= 200 && statusCode < 300) samples.push(responseTime);
      });
    }
  });
}
