import type { Static, TObject } from '@sinclair/typebox';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { TokenPrincipal } from '../domain/principal.ts';
import { API_ERRORS, type ApiError } from '../errors.ts';

/**
 * Which of the API's authentication hooks a tool mirrors (http/plugins/authentication.ts), after
 * the transport has taken the token:
 * - `search`: a counted call (authenticateSearch): a plan in force or a sandbox token, else 402.
 *   The principal may come from the search path's cache, because the search's commit re-checks it.
 * - `customer`: a free call of a customer (authenticateCustomer): the same rule, read afresh.
 * - `account`: what an account manages (authenticateAccount): a live token, read afresh; a sandbox
 *   token is 403.
 */
export type ToolAccess = 'search' | 'customer' | 'account';

export interface ToolContext {
  services: FastifyInstance['services'];
  /** The token's principal: from the search path's cache for `search` tools, read afresh for the others. */
  principal: TokenPrincipal;
  /** The HTTP request's id and logger: a fault is logged with them and answered with the id alone. */
  requestId: string;
  log: FastifyBaseLogger;
}

/** A tool's answer: structuredContent is the API's JSON, told in one paragraph for the model. */
export interface ToolAnswer {
  /** An object: the API answers objects (an interface such as LotHistory has no index signature, hence not a Record). */
  json: object;
  /** The JSON as text, when the service answered it as text already (a report's lots are the store's JSON). */
  jsonText?: string;
  summary: string;
}

/**
 * One tool of the MCP server, mirroring one API operation: its input as a TypeBox schema (which
 * validates the arguments and is the listed inputSchema), the schema of its structuredContent,
 * and a call that asks the service the route asks and answers what the route answers. An API
 * refusal is thrown as the route throws it (an ApiError), and becomes a tool error.
 */
export interface McpTool<Input extends TObject = TObject> {
  name: string;
  title: string;
  /** What an agent needs to pick the tool and use its answer: what it does, what it costs, what comes back. */
  description: string;
  access: ToolAccess;
  /** For a counted tool on live data alone (the catalogue, the market): a sandbox token's refusal, checked before the arguments as the API does. */
  sandboxRefusal?: () => ApiError;
  input: Input;
  output: TObject;
  annotations: ToolAnnotations;
  // Method syntax: a registry holds tools of different inputs (parameters compare bivariantly).
  call(context: ToolContext, args: Static<Input>): Promise<ToolAnswer>;
}

export function defineTool<Input extends TObject>(tool: McpTool<Input>): McpTool<Input> {
  return tool;
}

/** A tool's successful result: the summary, the JSON as text for clients that read only text, and the structured JSON. */
export function toolResult(answer: ToolAnswer): CallToolResult {
  return {
    content: [
      { type: 'text', text: answer.summary },
      { type: 'text', text: answer.jsonText ?? JSON.stringify(answer.json) },
    ],
    structuredContent: answer.json as Record<string, unknown>,
  };
}

/**
 * An API refusal as a tool error: the API's message as the text, and its error body with the
 * status it would have had (and Retry-After, in seconds, where the API sends it) as structured content.
 */
export function toolError(error: ApiError): CallToolResult {
  const { status, code } = API_ERRORS[error.kind];
  const retryAfter = error.options.headers?.['retry-after'];
  return {
    isError: true,
    content: [{ type: 'text', text: error.message }],
    structuredContent: {
      status,
      ...(code === null ? {} : { code }),
      message: error.message,
      ...(error.options.errors ? { errors: error.options.errors } : {}),
      ...(retryAfter === undefined ? {} : { retry_after: Number(retryAfter) }),
    },
  };
}

/** "1 lot", "3 lots"; "1 search", "3 searches". */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? noun : plural}`;
}
