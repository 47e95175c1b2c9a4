import net from 'node:net';

/**
 * A TCP proxy in front of a real server (Redis), so that a test can make that server slow or
 * unreachable for the clients behind the proxy without touching the server other suites share.
 */
export class TcpProxy {
  private readonly server: net.Server;
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private mode: 'pass' | 'blackhole' | 'down' = 'pass';
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {
    this.server = net.createServer((client) => this.accept(client));
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  private accept(client: net.Socket): void {
    if (this.mode === 'down') {
      client.destroy();
      return;
    }
    const upstream = net.connect(this.targetPort, this.targetHost);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    this.pairs.add(pair);
    const forward = (from: net.Socket, to: net.Socket) =>
      from.on('data', (chunk) => {
        // A black hole swallows traffic in both directions: the server looks hung.
        if (this.mode === 'pass') to.write(chunk);
      });
    forward(client, upstream);
    forward(upstream, client);
    const close = () => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(pair);
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  }

  /** The server stops answering, but connections stay open (a hung or overloaded server). */
  blackhole(): void {
    this.mode = 'blackhole';
  }

  /** Every connection is cut and new ones are refused at once (the server died). */
  down(): void {
    this.mode = 'down';
    for (const [client, upstream] of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
  }

  /** Traffic flows again. Connections opened during a black hole were never answered: cut them. */
  restore(): void {
    if (this.mode === 'blackhole') this.down();
    this.mode = 'pass';
  }

  async stop(): Promise<void> {
    this.down();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
