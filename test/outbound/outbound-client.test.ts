import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundClient, OutboundError } from '../../src/outbound/outbound-client.ts';
import { checkOutboundUrl, isPublicAddress, outboundPolicy } from '../../src/outbound/outbound-policy.ts';

describe('isPublicAddress', () => {
  it.each([
    ['8.8.8.8', true],
    ['93.184.216.34', true],
    ['2606:4700:4700::1111', true],
    ['::ffff:8.8.8.8', true],
    ['127.0.0.1', false],
    ['127.9.9.9', false],
    ['10.1.2.3', false],
    ['172.16.5.4', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['fc00::1', false],
    ['::ffff:10.0.0.1', false],
    ['::ffff:127.0.0.1', false],
    // IPv4-compatible IPv6 (::/96, deprecated): judged by the IPv4 address inside (issue 28, F6).
    ['::127.0.0.1', false],
    ['::7f00:1', false],
    ['0:0:0:0:0:0:7f00:1', false],
    ['::169.254.169.254', false],
    ['::10.0.0.1', false],
    ['::192.168.1.1', false],
    ['::0.0.0.2', false],
    ['::8.8.8.8', true],
    ['not-an-address', false],
  ])('%s → %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('checkOutboundUrl', () => {
  const production = outboundPolicy({ allowPrivate: false, isProduction: true });
  const development = outboundPolicy({ allowPrivate: false, isProduction: false });
  const open = outboundPolicy({ allowPrivate: true, isProduction: true });

  it('allows https to a name, and plain http only outside production or when private is allowed', () => {
    expect(checkOutboundUrl('https://hooks.example.com/x', production).ok).toBe(true);
    expect(checkOutboundUrl('http://hooks.example.com/x', production)).toEqual({ ok: false, reason: 'only https:// URLs are allowed' });
    expect(checkOutboundUrl('http://hooks.example.com/x', development).ok).toBe(true);
    expect(checkOutboundUrl('http://127.0.0.1:9/x', open).ok).toBe(true);
  });

  it('refuses other schemes, credentials and literal private addresses in every spelling', () => {
    expect(checkOutboundUrl('ftp://example.com/', development).ok).toBe(false);
    expect(checkOutboundUrl('gopher://example.com/', open).ok).toBe(false);
    expect(checkOutboundUrl('https://user:pw@example.com/', production).ok).toBe(false);
    for (const url of ['https://127.0.0.1/', 'https://[::1]/', 'https://2130706433/', 'https://0x7f.1/', 'https://169.254.169.254/latest/meta-data', 'https://[::ffff:10.0.0.1]/', 'https://[::127.0.0.1]/', 'https://[::169.254.169.254]/latest/meta-data', 'https://[::10.0.0.1]/', 'https://[::7f00:1]/']) {
      expect(checkOutboundUrl(url, production), url).toMatchObject({ ok: false, reason: expect.stringContaining('not a public address') });
    }
    expect(checkOutboundUrl('not a url', production)).toEqual({ ok: false, reason: 'not an absolute URL' });
  });
});

describe('OutboundClient against a local server', () => {
  let server: Server;
  let base: string;
  let requests = 0;
  const closed = outboundPolicy({ allowPrivate: false, isProduction: false });
  const open = outboundPolicy({ allowPrivate: true, isProduction: false });
  const port = () => (server.address() as AddressInfo).port;

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests += 1;
      if (req.url === '/big') return res.end(Buffer.alloc(64 * 1024, 1));
      if (req.url === '/stall') return; // never answers
      if (req.url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
      if (req.url === '/to-credentials') return res.writeHead(302, { location: `http://u:p@127.0.0.1:${port()}/` }).end();
      if (req.url === '/moved') return res.writeHead(301, { location: '/' }).end();
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end(`${req.method} ${body}`));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${port()}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('refuses a literal loopback address and a name that resolves to one, before any byte is sent', async () => {
    const client = new OutboundClient(closed);
    const before = requests;
    await expect(client.request(`${base}/`, { timeoutMs: 2_000, maxBytes: 1_000 })).rejects.toMatchObject({ failure: 'refused' });
    const failure = await client.request(`http://localhost:${port()}/`, { timeoutMs: 2_000, maxBytes: 1_000 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OutboundError);
    expect(failure).toMatchObject({ failure: 'refused', message: expect.stringContaining('not a public address') });
    expect(requests).toBe(before);
    await client.close();
  });

  it('with private addresses allowed, sends and reads the answer', async () => {
    const client = new OutboundClient(open);
    const answer = await client.request(`http://localhost:${port()}/hook`, { method: 'POST', body: '{"a":1}', timeoutMs: 2_000, maxBytes: 1_000 });
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe('POST {"a":1}');
    await client.close();
  });

  it('bounds the answer in size and the exchange in time', async () => {
    const client = new OutboundClient(open);
    await expect(client.request(`${base}/big`, { timeoutMs: 2_000, maxBytes: 1_000 })).rejects.toMatchObject({ failure: 'too-large' });
    const started = Date.now();
    await expect(client.request(`${base}/stall`, { timeoutMs: 200, maxBytes: 1_000 })).rejects.toMatchObject({ failure: 'timeout' });
    expect(Date.now() - started).toBeLessThan(1_500);
    await client.close();
  });

  it('answers a redirect itself unless told to follow, and checks every hop it follows', async () => {
    const client = new OutboundClient(open);
    expect((await client.request(`${base}/moved`, { timeoutMs: 2_000, maxBytes: 1_000 })).status).toBe(301);
    const followed = await client.request(`${base}/moved`, { timeoutMs: 2_000, maxBytes: 1_000, maxRedirects: 3 });
    expect([followed.status, followed.url]).toEqual([200, `${base}/`]);
    await expect(client.request(`${base}/loop`, { timeoutMs: 2_000, maxBytes: 1_000, maxRedirects: 3 })).rejects.toMatchObject({ failure: 'too-many-redirects' });
    await expect(client.request(`${base}/to-credentials`, { timeoutMs: 2_000, maxBytes: 1_000, maxRedirects: 3 })).rejects.toMatchObject({
      failure: 'refused',
      message: expect.stringContaining('user name or password'),
    });
    await client.close();
  });

  it('names a connection failure as a network error', async () => {
    const client = new OutboundClient(open);
    await expect(client.request('http://127.0.0.1:1/', { timeoutMs: 2_000, maxBytes: 1_000 })).rejects.toMatchObject({ failure: 'network' });
    await client.close();
  });
});
