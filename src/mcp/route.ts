import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorRef, jsonBodyErrorResponses, wwwAuthenticateHeader } from '../http/api/schemas.ts';
import { invalidTokenError } from '../http/plugins/authentication.ts';
import { McpEndpoint } from './mcp-server.ts';
import { checkPost } from './json-response-transport.ts';
import { TOOLS } from './tools/index.ts';

/**
 * A JSON-RPC request is a few hundred bytes (a tool name and a VIN); a batch of them a few KiB.
 * The bound is also the body's depth bound: nothing deeper than this many bytes can arrive.
 */
export const MCP_BODY_LIMIT = 64 * 1024;

const JsonRpcMessage = Type.Object({ jsonrpc: Type.Literal('2.0') }, { additionalProperties: true, description: 'A JSON-RPC 2.0 message of the Model Context Protocol.' });

/** The JSON-RPC requests of a body (one message or a batch) that call a tool, by the tool's name. */
function calledTools(body: unknown): (string | null)[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.map((message) => {
    if (typeof message !== 'object' || message === null) return null;
    const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
    return method === 'tools/call' && typeof params?.name === 'string' ? params.name : null;
  });
}

/**
 * The MCP server at /mcp (docs/mcp.md): Streamable HTTP in stateless mode, answered as JSON. The
 * token is the API's, taken by the same hook and cache; each tool then mirrors its API operation
 * (src/mcp/tools/). GET and DELETE (a stream, a session's end) have nothing to serve without
 * sessions: the error handler answers them 405 with `Allow: POST`.
 */
const mcpRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const endpoint = new McpEndpoint(TOOLS);
  const { services } = app;
  const ownOrigin = new URL(services.config.publicBaseUrl).origin;

  app.post(
    '/mcp',
    {
      onRequest: app.authenticateToken,
      bodyLimit: MCP_BODY_LIMIT,
      schema: {
        // JSON-RPC, not a REST operation: docs/mcp.md and docs/api.md ("MCP server") describe it.
        hide: true,
        body: Type.Union([JsonRpcMessage, Type.Array(JsonRpcMessage, { minItems: 1, maxItems: 100 })]),
        response: {
          200: Type.Unknown({ description: 'The JSON-RPC response(s); a tool that the API would refuse answers a result with isError.' }),
          202: Type.Null({ description: 'Notifications or responses only: accepted, nothing to answer.' }),
          ...jsonBodyErrorResponses,
          401: errorRef('UNAUTHENTICATED', 'Authorization missing, malformed, unknown or revoked. Body is exactly {"message":"Unauthenticated."}.', wwwAuthenticateHeader('vinhistory')),
          406: Type.Unknown({ description: 'A JSON-RPC error: the Accept header must list both application/json and text/event-stream.' }),
          413: errorRef('PAYLOAD_TOO_LARGE', `Request body too large (the limit is ${MCP_BODY_LIMIT / 1024} KiB).`),
          422: errorRef('VALIDATION_FAILED', 'The body is not a JSON-RPC message (or a batch of 1 to 100).'),
          503: errorRef('DATABASE_BUSY', 'The database is busy; nothing was counted. Try again after Retry-After.', { 'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying.' } }),
          '5xx': errorRef('INTERNAL', 'A fault of the service. The message carries a request id and no internals.'),
        },
      },
    },
    async (request, reply) => {
      const refusedHeaders = checkPost(request.headers, ownOrigin);
      if (refusedHeaders) return reply.code(refusedHeaders.status).type('application/json').send(refusedHeaders.body);
      let principal = request.tokenPrincipal!;
      // The principal may come from the search path's cache, which only a search's commit
      // re-checks: anything else (the listing, a free tool) reads it afresh, as the API's routes do.
      if (!calledTools(request.body).every((name) => name !== null && endpoint.accessOf(name) === 'search')) {
        const fresh = await services.apiTokens.reload(principal);
        if (fresh === null) throw invalidTokenError();
        principal = fresh;
      }
      const { answer, refused } = await endpoint.handle(request.body, { services, principal, requestId: request.id, log: request.log });
      // A search's commit found the token revoked: the transport's 401, as the API would answer.
      if (refused) throw refused;
      reply.code(answer.status);
      return answer.body === null ? reply.send() : reply.type('application/json').send(answer.body);
    },
  );
};

export default mcpRoutes;
