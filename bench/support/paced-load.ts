import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { summariseLatencies, type LatencySummary } from './latencies.ts';

/**
 * Load at a fixed rate with evenly spaced arrivals (open loop), for "latency at N requests per
 * second". autocannon's overallRate cannot give that: each connection sends its share of the
 * second back to back as soon as the second starts, then idles (lib/httpClient.js, rateInterval),
 * so its latencies are those of a burst at full concurrency, which the throughput run already
 * measures. Here request k is due at start + k/rate whatever happened before, and its latency is
 * counted from that due time, so a stall of the server shows in every request it delays
 * (no coordinated omission).
 */
export interface PacedLoadOptions {
  host: string;
  port: number;
  /** Requests per second. */
  rate: number;
  durationSeconds: number;
  /** The path of the next request (called once per request). */
  path: () => string;
  headers: Record<string, string>;
  /** Upper bound on concurrent connections; requests beyond it queue, and their wait counts. */
  maxConnections?: number;
}

export interface PacedLoadResult {
  sent: number;
  completed: number;
  /** Completed requests per second over the run. */
  achievedRate: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  errors: number;
  /** Sample of error messages, for the report. */
  errorMessages: string[];
  latency: LatencySummary;
}

export async function pacedLoad(options: PacedLoadOptions): Promise<PacedLoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.maxConnections ?? 64 });
  const total = Math.round(options.rate * options.durationSeconds);
  const intervalMs = 1000 / options.rate;
  const latencies = new Float64Array(total);
  const statusCodes: Record<string, number> = {};
  const errorMessages: string[] = [];
  let sent = 0;
  let completed = 0;
  let errors = 0;
  let non2xx = 0;
  let lastCompletion = 0;

  const start = performance.now();
  let finish!: () => void;
  const allDone = new Promise<void>((resolve) => (finish = resolve));
  const settle = () => {
    lastCompletion = performance.now();
    if (completed + errors === total) finish();
  };

  const fire = (index: number) => {
    const due = start + index * intervalMs;
    const request = http.request(
      { agent, host: options.host, port: options.port, method: 'GET', path: options.path(), headers: options.headers },
      (response) => {
        const code = String(response.statusCode);
        statusCodes[code] = (statusCodes[code] ?? 0) + 1;
        response.resume();
        response.once('end', () => {
          latencies[completed++] = performance.now() - due;
          if (response.statusCode! < 200 || response.statusCode! >= 300) non2xx++;
          settle();
        });
        response.once('error', (error) => {
          errors++;
          if (errorMessages.length < 5) errorMessages.push(error.message);
          settle();
        });
      },
    );
    request.once('error', (error) => {
      errors++;
      if (errorMessages.length < 5) errorMessages.push(error.message);
      settle();
    });
    request.end();
  };

  // Timers fire at best every millisecond or so; each tick sends every request already due, so
  // the arrivals stay on schedule on average and within a tick of it one by one.
  const tick = () => {
    const due = Math.min(total, Math.floor((performance.now() - start) / intervalMs) + 1);
    while (sent < due) fire(sent++);
    if (sent < total) setTimeout(tick, Math.max(0, start + sent * intervalMs - performance.now()));
  };
  tick();

  const timeoutMs = options.durationSeconds * 1000 + 30_000;
  const timedOut = await Promise.race([
    allDone.then(() => false),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(true), timeoutMs).unref()),
  ]);
  agent.destroy();
  if (timedOut) {
    const missing = total - completed - errors;
    errors += missing;
    errorMessages.push(`${missing} requests had no answer ${timeoutMs / 1000} s after the start`);
  }
  const elapsedSeconds = ((lastCompletion || performance.now()) - start) / 1000;
  return {
    sent,
    completed,
    achievedRate: completed / Math.max(elapsedSeconds, options.durationSeconds),
    non2xx,
    statusCodes,
    errors,
    errorMessages,
    latency: summariseLatencies(latencies.subarray(0, completed)),
  };
}
