import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { ErrorCode, JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type MessageExtraInfo, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/** What the transport answers one HTTP request: a status, and the body (JSON text), or none for 202. */
export interface TransportAnswer {
  status: number;
  body: string | null;
}

/** The headers of a POST that the Streamable HTTP transport reads (lower-case names, as Node gives them). */
export interface TransportHeaders {
  accept?: string | undefined;
  'content-type'?: string | undefined;
  'mcp-protocol-version'?: string | undefined;
  origin?: string | undefined;
}

/** A transport-level refusal: a JSON-RPC error without an id (MCP, "Streamable HTTP": the body MAY be one). */
function refusal(status: number, code: number, message: string): TransportAnswer {
  return { status, body: JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }) };
}

/**
 * The checks of a POST before any message is read, as MCP revision 2025-11-25's Streamable HTTP
 * transport asks them (and in the words of the SDK's transport, which clients already show): an
 * Origin, when a browser sends one, is the service's own (the spec's guard against DNS
 * rebinding: 403 otherwise); the client accepts both answers, sends JSON, and names a protocol
 * revision the server speaks. A missing MCP-Protocol-Version is allowed (the spec's fallback for
 * clients before 2025-06-18).
 */
export function checkPost(headers: TransportHeaders, ownOrigin: string): TransportAnswer | null {
  if (headers.origin !== undefined && headers.origin !== ownOrigin) return refusal(403, -32000, `Forbidden: Origin ${headers.origin.slice(0, 100)} is not this server's`);
  const accept = headers.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
    return refusal(406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
  }
  if (!isJsonContentType(headers['content-type'] ?? null)) return refusal(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
  const version = headers['mcp-protocol-version'];
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    return refusal(400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
  }
  return null;
}

/**
 * The Streamable HTTP transport for the stateless case that answers JSON, not an event stream, as
 * a `Transport` of the SDK: its protocol server (`Server`) connects to it and does all of the
 * protocol (initialize, ping, the tools' requests, errors), and this hands it the messages of one
 * HTTP request, already parsed, and collects its responses into the HTTP answer.
 *
 * Why not the SDK's WebStandardStreamableHTTPServerTransport: for each request it wants a Web
 * `Request` (an AbortSignal, header and URL parsing) and answers a Web `Response` whose body the
 * route then reads back through a stream; it keys streams by a random UUID and checks every
 * outgoing message against zod schemas. With one request in flight that machinery cost more CPU
 * than the protocol itself (docs/benchmarks.md, "MCP"). What this keeps of it is the behaviour
 * on the wire: the same checks and refusals (checkPost, the message checks below), 202 without a
 * body for notifications and responses, one JSON object for one request and an array for a batch.
 *
 * One transport (and one protocol server) per HTTP request, as the SDK asks of a stateless
 * transport: the SDK keys what is in flight by the JSON-RPC id, which every client numbers from
 * the same start, so a server shared by clients would mix up their requests (and their
 * cancellations); a new pair costs about 2 µs.
 */
export class JsonResponseTransport implements Transport {
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  /** The responses awaited, by request id, in the order of the body. */
  private readonly awaited = new Map<RequestId, string | null>();
  private remaining = 0;
  private done: (() => void) | null = null;
  private used = false;

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  /** A response of the server: kept until every request of the body has one. Anything else (a notification of progress or a log, a request of the server's own) has no stream to go to in JSON mode, and is dropped as the SDK's transport drops it. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (!('result' in message || 'error' in message) || message.id === undefined) return;
    if (this.awaited.get(message.id) !== null) return;
    this.awaited.set(message.id, JSON.stringify(message));
    this.remaining -= 1;
    if (this.remaining === 0) this.done?.();
  }

  /**
   * One HTTP request's body (one message or a batch), its headers already passed by checkPost:
   * each message checked against the protocol's schema, handed to the server, and its responses
   * answered as JSON once all have come.
   */
  async exchange(body: unknown): Promise<TransportAnswer> {
    if (this.used) throw new Error('A stateless transport answers one HTTP request.');
    this.used = true;
    const raw = Array.isArray(body) ? body : [body];
    if (raw.length > MAX_BATCH_SIZE) return refusal(400, ErrorCode.InvalidRequest, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
    const messages: JSONRPCMessage[] = [];
    for (const item of raw) {
      const parsed = JSONRPCMessageSchema.safeParse(item);
      if (!parsed.success) return refusal(400, ErrorCode.ParseError, 'Parse error: Invalid JSON-RPC message');
      messages.push(parsed.data);
    }
    if (messages.length > 1 && messages.some((message) => 'method' in message && message.method === 'initialize')) {
      return refusal(400, ErrorCode.InvalidRequest, 'Invalid Request: Only one initialization request is allowed');
    }
    const requests = messages.filter((message) => 'method' in message && 'id' in message) as (JSONRPCMessage & { id: RequestId })[];
    for (const request of requests) {
      // Two requests of one body with one id could not be told apart in the answer.
      if (this.awaited.has(request.id)) return refusal(400, ErrorCode.InvalidRequest, 'Invalid Request: Request ids in a batch must be unique');
      this.awaited.set(request.id, null);
    }
    this.remaining = requests.length;
    const answered = requests.length === 0 ? null : new Promise<void>((resolve) => (this.done = resolve));
    for (const message of messages) {
      // A cancellation would stop the server answering a request this body still waits for
      // (and one in a later body names a request no server has: each body has its own). The
      // protocol lets a receiver ignore it; every tool answers in milliseconds anyway.
      if ('method' in message && message.method === 'notifications/cancelled') continue;
      this.onmessage?.(message);
    }
    // Notifications and responses only: accepted, nothing to answer (MCP, "Sending Messages").
    if (answered === null) return { status: 202, body: null };
    await answered;
    const bodies = [...this.awaited.values()] as string[];
    return { status: 200, body: Array.isArray(body) ? `[${bodies.join(',')}]` : bodies[0]! };
  }
}
