import type { Redis } from 'ioredis';
import { systemClock, type Clock } from './clock.ts';
import type { PrimaryHealth } from './resilient-rate-limiter.ts';

export interface RedisHealthOptions {
  /** While Redis is suspected (connected but not answering), how often to PING it. */
  pingEveryMs: number;
  /** How long one PING may take before it counts as failed. */
  pingTimeoutMs: number;
  clock?: Clock;
}

/**
 * Redis's health as the ioredis client reports it: up on 'ready' (connected, and the server has
 * loaded), down on 'close' or 'end'. A hung server keeps its connection open and sends no event, so
 * a call that times out makes it suspect: down, and a PING in the background every `pingEveryMs`
 * until one is answered. Requests never probe Redis.
 */
export class RedisHealth implements PrimaryHealth {
  private isUp: boolean;
  private readonly listeners: ((up: boolean, reason?: unknown) => void)[] = [];
  private cancelPing: (() => void) | undefined;
  private pinging = false;
  private closed = false;
  private readonly clock: Clock;

  private readonly onReady = () => {
    this.stopPinging();
    this.set(true);
  };

  private readonly onClose = () => {
    this.stopPinging();
    this.set(false, new Error('Redis connection closed'));
  };

  constructor(
    private readonly redis: Redis,
    private readonly options: RedisHealthOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.isUp = redis.status === 'ready';
    redis.on('ready', this.onReady);
    redis.on('close', this.onClose);
    redis.on('end', this.onClose);
  }

  get up(): boolean {
    return this.isUp;
  }

  onChange(listener: (up: boolean, reason?: unknown) => void): void {
    this.listeners.push(listener);
  }

  suspect(reason: unknown): void {
    if (!this.isUp || this.closed) return;
    this.set(false, reason);
    this.schedulePing();
  }

  private schedulePing(): void {
    this.cancelPing = this.clock.after(this.options.pingEveryMs, () => {
      this.cancelPing = undefined;
      void this.ping();
    });
  }

  private async ping(): Promise<void> {
    // Not connected: the next 'ready' says when it is back; nothing to ask meanwhile.
    if (this.closed || this.isUp || this.redis.status !== 'ready') return;
    this.pinging = true;
    let answered = false;
    let cancelTimeout: (() => void) | undefined;
    try {
      await Promise.race([
        this.redis.ping(),
        new Promise<never>((_, reject) => {
          cancelTimeout = this.clock.after(this.options.pingTimeoutMs, () => reject(new Error('PING timed out')));
        }),
      ]);
      answered = true;
    } catch {
      // Still not answering: try again below.
    } finally {
      cancelTimeout?.();
    }
    if (!this.pinging) return; // a connection event settled it meanwhile
    this.pinging = false;
    if (answered) this.set(true);
    else this.schedulePing();
  }

  private stopPinging(): void {
    this.cancelPing?.();
    this.cancelPing = undefined;
    this.pinging = false;
  }

  private set(up: boolean, reason?: unknown): void {
    if (up === this.isUp || this.closed) return;
    this.isUp = up;
    for (const listener of this.listeners) listener(up, reason);
  }

  /** Stops listening and pinging; the connection belongs to whoever made it. */
  close(): void {
    this.closed = true;
    this.stopPinging();
    this.redis.off('ready', this.onReady);
    this.redis.off('close', this.onClose);
    this.redis.off('end', this.onClose);
  }
}
