import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A real webhook receiver on 127.0.0.1: records every request, answers `status` (after `delayMs`),
 * and tracks how many requests for one event id are in flight at once.
 */
export class Receiver {
  readonly received: Received[] = [];
  status = 200;
  delayMs = 0;
  answer = 'ok';
  /** The most requests of one Vinhistory-Event-Id it ever had in flight together. */
  maxConcurrentPerEvent = 0;
  private readonly inFlight = new Map<string, number>();
  private server: Server | null = null;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const eventId = String(req.headers['vinhistory-event-id'] ?? '');
        const now = (this.inFlight.get(eventId) ?? 0) + 1;
        this.inFlight.set(eventId, now);
        this.maxConcurrentPerEvent = Math.max(this.maxConcurrentPerEvent, now);
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        const status = this.status;
        setTimeout(() => {
          this.inFlight.set(eventId, (this.inFlight.get(eventId) ?? 1) - 1);
          res.writeHead(status, { 'content-type': 'text/plain' }).end(this.answer);
        }, this.delayMs);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
    return this;
  }

  events(): { id: string; type: string; created_at: string; data: any }[] {
    return this.received.map((r) => JSON.parse(r.body));
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
