import fp from 'fastify-plugin';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { API_ERRORS, ApiError, DATABASE_BUSY_MESSAGE, DATABASE_BUSY_RETRY_AFTER_SECONDS, kindOfStatus, type ErrorKind } from '../../errors.ts';
import { isDatabaseBusy } from '../../storage/database.ts';

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The paths of the JSON APIs: the customers', the operators' and the MCP endpoint (whose GET and DELETE are a JSON 405). */
function isApiPath(path: string): boolean {
  return path === '/api' || path.startsWith('/api/') || path === '/admin' || path.startsWith('/admin/') || path === '/mcp';
}

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/** Ajv errors, keyed by the field they are about, in words a customer understands. */
export function validationErrorsByField(errors: AjvError[], context: string | undefined): Record<string, string[]> {
  const byField: Record<string, string[]> = {};
  for (const error of errors) {
    const missing = typeof error.params.missingProperty === 'string' ? error.params.missingProperty : null;
    const field = missing ?? (error.instancePath.replace(/^\//, '').replace(/\//g, '.') || context || 'body');
    let message: string;
    if (missing) message = `The ${field} field is required.`;
    else if (error.keyword === 'type') message = `The ${field} must be of type ${String(error.params.type)}.`;
    else message = `The ${field} ${error.message ?? 'is invalid'}.`;
    (byField[field] ??= []).push(message);
  }
  return byField;
}

/** An error of the closed set (errors.ts): its status, and `{ code, message }` (the 401 without a code). */
function sendError(reply: FastifyReply, kind: ErrorKind, message: string, errors?: Record<string, string[]>) {
  const { status, code } = API_ERRORS[kind];
  const body = { ...(code === null ? {} : { code }), message, ...(errors ? { errors } : {}) };
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

/**
 * A search route's principal may come from this process's cache (plugins/authentication.ts). A
 * client error decided outside the search service (a body that cannot be read or is too large, a
 * field missing) is answered only once the principal is read afresh: a revoked token or an ended
 * subscription still answers 401 or 402 first. When that read fails, the original error stands.
 */
async function principalRefusalFirst(error: FastifyError | ApiError, request: FastifyRequest): Promise<FastifyError | ApiError> {
  if (error instanceof ApiError || !request.principalFromCache) return error;
  const clientError = error.validation !== undefined || (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500);
  if (!clientError) return error;
  return (await request.staleSearchPrincipalRefusal().catch(() => null)) ?? error;
}

/**
 * Every error leaves as `{ code, message }` JSON with the status and code of the closed set in errors.ts. Faults
 * of the service (5xx) are logged with the request id and answered without internals.
 */
export default fp(
  async (app) => {
    app.setErrorHandler(async (thrown: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
      const error = await principalRefusalFirst(thrown, request);
      if (error instanceof ApiError) {
        if (error.options.headers) reply.headers(error.options.headers);
        return sendError(reply, error.kind, error.message, error.options.errors);
      }
      if (error.validation) {
        const errors = validationErrorsByField(error.validation, error.validationContext);
        const first = Object.values(errors)[0]?.[0] ?? 'The request is invalid.';
        return sendError(reply, 'VALIDATION_FAILED', first, errors);
      }
      switch (error.code) {
        case 'FST_ERR_CTP_BODY_TOO_LARGE':
          return sendError(reply, 'PAYLOAD_TOO_LARGE', `The request body is too large; the limit is ${request.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit} bytes.`);
        case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
          return sendError(reply, 'UNSUPPORTED_MEDIA_TYPE', 'Unsupported Content-Type: send the body as application/json.');
        case 'FST_ERR_CTP_EMPTY_JSON_BODY':
          return sendError(reply, 'VALIDATION_FAILED', 'The request body is empty; send a JSON object.', {
            body: ['The request body is empty; send a JSON object.'],
          });
        case 'FST_ERR_CTP_INVALID_JSON_BODY':
          return sendError(reply, 'BAD_REQUEST', 'The request body is not valid JSON.');
      }
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        // A client error Fastify decided (a malformed Content-Length, say): the kind of its status.
        return sendError(reply, kindOfStatus(error.statusCode), error.message);
      }
      // Contention, not a fault: a CLI import holds the write lock for one batch at a time.
      if (isDatabaseBusy(error)) {
        request.log.warn({ err: error }, 'database busy');
        reply.header('retry-after', String(DATABASE_BUSY_RETRY_AFTER_SECONDS));
        return sendError(reply, 'DATABASE_BUSY', DATABASE_BUSY_MESSAGE);
      }
      request.log.error({ err: error }, 'request failed');
      return sendError(reply, 'INTERNAL', `Internal error. If it persists, contact support quoting request id ${request.id}.`);
    });

    /**
     * A request no route takes: under the two JSON APIs (customer `/api/`, operators' `/admin/`)
     * a JSON 405 with `Allow` when the path exists for other methods, else a JSON 404; elsewhere
     * the website's not-found page. QUERY, a method no route takes, is 405 on any known path.
     */
    // hasRoute knows a path only as it was declared: a route with parameters (`/api/v1/lots/:auction/:lot_id`)
    // is matched against the asked path by its own pattern.
    const parametric: { method: string; pattern: RegExp }[] = [];
    app.addHook('onRoute', (route) => {
      if (!route.url.includes(':')) return;
      const segments = route.url.split('/').map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      const pattern = new RegExp(`^${segments.join('/')}$`);
      for (const method of [route.method].flat()) parametric.push({ method, pattern });
    });
    const routed = (method: string, path: string) =>
      app.hasRoute({ method: method, url: path }) || parametric.some((route) => route.method === method && route.pattern.test(path));

    const answerUnrouted = (request: FastifyRequest, reply: FastifyReply) => {
      const path = request.url.split('?')[0]!;
      const allowed = HTTP_METHODS.filter((method) => routed(method, path));
      const api = isApiPath(path);
      if (allowed.length > 0 && (api || request.method === 'QUERY')) {
        reply.header('allow', allowed.join(', '));
        return sendError(reply, 'METHOD_NOT_ALLOWED', `Method ${request.method} is not allowed on ${path}; use ${allowed.join(' or ')}.`);
      }
      if (api) {
        const reference = path === '/admin' || path.startsWith('/admin/') ? '/admin/v1/openapi.json' : '/docs';
        return sendError(reply, 'ROUTE_NOT_FOUND', `No API endpoint at ${request.method} ${path}. The API reference is at ${reference}.`);
      }
      return app.renderNotFoundPage(request, reply);
    };

    // Answered before the body is read: a wrong method's upload is not worth reading, and Fastify
    // would refuse a QUERY without Content-Type with a 400 while parsing, before the handler below.
    app.addHook('onRequest', async (request, reply) => {
      if (!request.is404) return;
      if (request.method === 'QUERY' || isApiPath(request.url.split('?')[0]!)) return answerUnrouted(request, reply);
    });
    app.setNotFoundHandler(async (request, reply) => answerUnrouted(request, reply));
  },
  { name: 'error-handler', dependencies: ['view'] },
);
