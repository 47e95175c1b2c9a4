import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';

/** Real image bytes of each format, made with sharp: a gradient so that every photo differs. */
export async function makeImage(format: 'jpeg' | 'png' | 'webp', seed = 0, size = { width: 640, height: 480 }): Promise<Buffer> {
  const { width, height } = size;
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      pixels[i] = (x + seed * 37) & 0xff;
      pixels[i + 1] = (y + seed * 11) & 0xff;
      pixels[i + 2] = (x * y + seed) & 0xff;
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } }).toFormat(format).toBuffer();
}

export interface ImageServer {
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  /** Requests per path, to prove an image was fetched once. */
  readonly hits: Map<string, number>;
  /** Paths in the order their requests arrived. */
  readonly order: string[];
  /** The most requests this server had in progress at once. */
  peakConcurrent(): number;
  /** Serves these bytes at this path (200, with the given Content-Type). */
  set(path: string, body: Buffer | string, contentType?: string): void;
  /** Answers this path with the status (a 503 before the photo comes back, a 404). */
  fail(path: string, status: number, times?: number): void;
  close(): Promise<void>;
}

interface Route {
  body: Buffer;
  contentType: string;
  failures: { status: number; left: number } | null;
}

/**
 * A local photo host for the archive's tests. Besides the routes set, it answers:
 * `/slow/...` after 3 s, `/html.jpg` an HTML page served as image/jpeg, `/missing.jpg` 404,
 * `/huge.jpg` 2 MiB of JPEG-looking bytes, `/redirect?to=<url>` a 302 to that URL.
 */
export async function startImageServer(options: { delayMs?: number } = {}): Promise<ImageServer> {
  const routes = new Map<string, Route>();
  const hits = new Map<string, number>();
  const order: string[] = [];
  let inFlight = 0;
  let peak = 0;
  const huge = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(2 * 1024 * 1024, 7)]);
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://x');
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    order.push(url.pathname);
    inFlight++;
    peak = Math.max(peak, inFlight);
    response.once('close', () => inFlight--);
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    if (url.pathname.startsWith('/slow/')) {
      const timer = setTimeout(() => response.writeHead(200, { 'content-type': 'image/jpeg' }).end(routes.get('/photo.jpg')?.body ?? ''), 3_000);
      response.on('close', () => clearTimeout(timer));
      return;
    }
    if (url.pathname === '/html.jpg') {
      return response.writeHead(200, { 'content-type': 'image/jpeg' }).end('<!doctype html><html><body>This photo is no longer available.</body></html>');
    }
    if (url.pathname === '/missing.jpg') return response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    if (url.pathname === '/huge.jpg') return response.writeHead(200, { 'content-type': 'image/jpeg' }).end(huge);
    if (url.pathname === '/redirect') return response.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
    const route = routes.get(url.pathname);
    if (!route) return response.writeHead(404).end();
    if (route.failures && route.failures.left > 0) {
      route.failures.left--;
      return response.writeHead(route.failures.status, { 'content-type': 'text/plain' }).end('try later');
    }
    response.writeHead(200, { 'content-type': route.contentType, 'content-length': route.body.length }).end(route.body);
  };
  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    hits,
    order,
    peakConcurrent: () => peak,
    set(path, body, contentType = 'image/jpeg') {
      routes.set(path, { body: Buffer.isBuffer(body) ? body : Buffer.from(body), contentType, failures: null });
    },
    fail(path, status, times = Number.POSITIVE_INFINITY) {
      const route = routes.get(path);
      if (route) route.failures = { status, left: times };
      else routes.set(path, { body: Buffer.alloc(0), contentType: 'text/plain', failures: { status, left: times } });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
