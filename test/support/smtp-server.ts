import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';

/** A message the test SMTP server took: its envelope recipient and its data, lines joined by \n. */
export interface ReceivedMail {
  to: string;
  data: string;
}

/**
 * A minimal SMTP server on 127.0.0.1 (enough of RFC 5321 for plain messages) whose behaviour a
 * test switches at any time: `accept` takes messages; `stall` accepts connections and never says
 * a word (a hung server: the client waits for its greeting); `down` resets every connection at
 * once (a server that is away). The port stays the same across modes.
 */
export class TestSmtpServer {
  readonly received: ReceivedMail[] = [];
  mode: 'accept' | 'stall' | 'down';
  /** Connections opened, in any mode. */
  connections = 0;
  /** In `accept` mode, how long the server waits before its greeting: a slow server (the benchmark's). */
  greetingDelayMs = 0;
  port = 0;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly waiters: (() => void)[] = [];

  constructor(mode: TestSmtpServer['mode'] = 'accept') {
    this.mode = mode;
    this.server = createServer((socket) => this.accept(socket));
  }

  static async start(mode: TestSmtpServer['mode'] = 'accept'): Promise<TestSmtpServer> {
    const server = new TestSmtpServer(mode);
    server.server.listen(0, '127.0.0.1');
    await once(server.server, 'listening');
    server.port = (server.server.address() as { port: number }).port;
    return server;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** Resolves once `count` messages in all have been received. */
  waitForMessages(count: number): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (this.received.length >= count) resolve();
        else this.waiters.push(check);
      };
      this.waiters.push(check);
    });
  }

  /** Ends the connections held open (a stalled server's), so that their clients fail now. */
  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    this.connections++;
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => {});
    if (this.mode === 'down') {
      socket.resetAndDestroy();
      return;
    }
    if (this.mode === 'stall') return;
    let inData = false;
    let buffer = '';
    let to = '';
    let lines: string[] = [];
    if (this.greetingDelayMs > 0) setTimeout(() => socket.writable && socket.write('220 test ESMTP\r\n'), this.greetingDelayMs);
    else socket.write('220 test ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      let index: number;
      while ((index = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, index);
        buffer = buffer.slice(index + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            this.received.push({ to, data: lines.join('\n') });
            lines = [];
            socket.write('250 queued\r\n');
            for (const waiter of this.waiters.splice(0)) waiter();
          } else lines.push(line.startsWith('..') ? line.slice(1) : line);
          continue;
        }
        const command = line.slice(0, 4).toUpperCase();
        if (command === 'EHLO' || command === 'HELO') socket.write('250 test\r\n');
        else if (command === 'RCPT') {
          to = /<([^>]*)>/.exec(line)?.[1] ?? '';
          socket.write('250 ok\r\n');
        } else if (command === 'DATA') {
          inData = true;
          socket.write('354 go on\r\n');
        } else if (command === 'QUIT') socket.end('221 bye\r\n');
        else socket.write('250 ok\r\n');
      }
    });
  }
}

/** The text of a received message, its quoted-printable encoding (long lines, `=`) undone. */
export function textOf(mail: ReceivedMail): string {
  const split = mail.data.indexOf('\n\n');
  const headers = mail.data.slice(0, split);
  const body = mail.data.slice(split + 2);
  if (!/^content-transfer-encoding:\s*quoted-printable/im.test(headers)) return body;
  return body.replace(/=\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** Bytes of a quoted-printable text (soft line breaks undone), read as UTF-8. */
function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  const joined = text.replace(/=\n/g, '');
  for (let i = 0; i < joined.length; i++) {
    const hex = joined[i] === '=' ? /^[0-9A-F]{2}/i.exec(joined.slice(i + 1, i + 3)) : null;
    if (hex) {
      bytes.push(parseInt(hex[0], 16));
      i += 2;
    } else bytes.push(...Buffer.from(joined[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodePart(headers: string, body: string): string {
  const encoding = /^content-transfer-encoding:\s*(\S+)/im.exec(headers)?.[1]?.toLowerCase();
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body);
  return body;
}

/** Headers unfolded (a continuation line joined to its header). */
function headersOf(data: string): string {
  return data.slice(0, data.indexOf('\n\n')).replace(/\n[ \t]+/g, ' ');
}

/** The Subject header, its RFC 2047 encoded words decoded. */
export function subjectOf(mail: ReceivedMail): string {
  const raw = /^subject:\s*(.*)$/im.exec(headersOf(mail.data))?.[1] ?? '';
  return raw
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?utf-8\?([bq])\?([^?]*)\?=/gi, (_, kind: string, text: string) =>
      kind.toLowerCase() === 'b' ? Buffer.from(text, 'base64').toString('utf8') : decodeQuotedPrintable(text.replace(/_/g, ' ')),
    );
}

/** The text/plain and text/html parts of a message (one part or multipart/alternative), decoded. */
export function partsOf(mail: ReceivedMail): { text: string | null; html: string | null } {
  const headers = headersOf(mail.data);
  const body = mail.data.slice(mail.data.indexOf('\n\n') + 2);
  const boundary = /boundary="?([^";\s]+)"?/i.exec(headers)?.[1];
  const sections = boundary
    ? body
        .split(`--${boundary}`)
        .slice(1, -1)
        .map((section) => section.replace(/^\n/, ''))
    : [`${headers}\n\n${body}`];
  const parts: { text: string | null; html: string | null } = { text: null, html: null };
  for (const section of sections) {
    const split = section.indexOf('\n\n');
    const partHeaders = section.slice(0, split).replace(/\n[ \t]+/g, ' ');
    const decoded = decodePart(partHeaders, section.slice(split + 2));
    if (/^content-type:\s*text\/html/im.test(partHeaders)) parts.html = decoded;
    else if (/^content-type:\s*text\/plain/im.test(partHeaders)) parts.text = decoded;
  }
  return parts;
}
