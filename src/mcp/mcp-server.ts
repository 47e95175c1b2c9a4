import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import type { TObject } from '@sinclair/typebox';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { canSearch } from '../domain/principal.ts';
import { ApiError, DATABASE_BUSY_MESSAGE, DATABASE_BUSY_RETRY_AFTER_SECONDS } from '../errors.ts';
import { isDatabaseBusy } from '../storage/database.ts';
import { liveTokenRequiredError, subscriptionRequiredError } from '../http/plugins/authentication.ts';
import { toolError, toolResult, type McpTool, type ToolContext } from './tool.ts';
import { JsonResponseTransport, type TransportAnswer } from './json-response-transport.ts';

export const SERVER_INFO = { name: 'vinhistory', title: 'vinhistory: vehicle auction history', version: '1.0.0' };

const INSTRUCTIONS =
  'vinhistory answers the auction history of vehicles (Copart, IAAI, ...): every lot known for a VIN, with sale dates and prices, damage, odometer, title, photos and a shareable report page. ' +
  'search_vin, lookup_lot, search_lots, market_value and lot_history are paid calls counted against the monthly quota (one that finds nothing too), like the REST API they mirror; get_usage, list_watches, watch and unwatch are free. ' +
  'A tool error carries the API\'s message, and in its structured content the HTTP status the API would have answered (429: wait retry_after seconds). ' +
  'With a sandbox token (vh_test_) search_vin, lookup_lot and lot_history see only the documented test vehicles and count nothing; the catalogue, the market and watches need a live token.';

/**
 * The arguments' refusal in the API's words (http/plugins/error-handler.ts), keyed by argument,
 * one message each: a missing argument is also of the wrong type, which would only repeat it.
 */
function argumentErrors(errors: Iterable<ValueError>): Record<string, string[]> {
  const byField: Record<string, string[]> = {};
  for (const error of errors) {
    const field = error.path.replace(/^\//, '').replace(/\//g, '.') || 'arguments';
    if (byField[field]) continue;
    let message: string;
    if (error.type === ValueErrorType.ObjectRequiredProperty) message = `The ${field} field is required.`;
    else if (error.type === ValueErrorType.ObjectAdditionalProperties) message = `The ${field} argument is not one this tool takes.`;
    else if (error.type === ValueErrorType.Object) message = 'The arguments must be an object.';
    else if (typeof error.schema.type === 'string' && [ValueErrorType.String, ValueErrorType.Integer, ValueErrorType.Number].includes(error.type)) {
      message = `The ${field} must be of type ${error.schema.type}.`;
    } else message = `The ${field} is invalid: ${error.message.charAt(0).toLowerCase()}${error.message.slice(1)}.`;
    byField[field] = [message];
  }
  return byField;
}

/** A listed tool: plain JSON (TypeBox marks its schemas with symbols, which the listing need not carry). */
function listed(tool: McpTool): Tool {
  const plain = <T>(schema: T): T => JSON.parse(JSON.stringify(schema)) as T;
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: plain(tool.input),
    outputSchema: plain(tool.output),
    annotations: tool.annotations,
  };
}

/**
 * The MCP endpoint's protocol side: the tools, listed and checked once, and a stateless server
 * for each HTTP request (docs/decisions.md, "MCP server"). Nothing of a
 * request outlives it, so any instance behind a load balancer answers any request.
 */
export class McpEndpoint {
  private readonly list: Tool[];
  private readonly byName: Map<string, { tool: McpTool; check: TypeCheck<TObject> }>;
  /** One for every request's server: the SDK's default makes an Ajv instance (and compiles) per server. */
  private readonly validator = new AjvJsonSchemaValidator();

  constructor(tools: readonly McpTool[]) {
    this.list = tools.map(listed);
    this.byName = new Map(tools.map((tool) => [tool.name, { tool, check: TypeCompiler.Compile(tool.input) }]));
  }

  /** The access a tool asks, or undefined for a name that is no tool's. */
  accessOf(name: string): McpTool['access'] | undefined {
    return this.byName.get(name)?.tool.access;
  }

  /**
   * One HTTP request of the Streamable HTTP transport, its headers checked (checkPost) and its
   * JSON-RPC body already parsed, answered as JSON (no stream: every answer is ready at once).
   * `refused` is set when a tool met a token that is no longer live: the edge then answers the
   * transport's 401 instead of this answer.
   */
  async handle(body: unknown, context: ToolContext): Promise<{ answer: TransportAnswer; refused: ApiError | null }> {
    let refused: ApiError | null = null;
    const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator: this.validator });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.list }));
    server.setRequestHandler(CallToolRequestSchema, async (call): Promise<CallToolResult> => {
      try {
        return await this.call(call.params.name, call.params.arguments ?? {}, context);
      } catch (error) {
        if (error instanceof McpError) throw error;
        if (error instanceof ApiError) {
          if (error.kind === 'UNAUTHENTICATED') refused = error;
          return toolError(error);
        }
        // As the API's error handler answers them: contention is a 503 to retry, anything else a
        // fault, logged with the request id and answered with the id alone (no internals).
        if (isDatabaseBusy(error)) {
          context.log.warn({ err: error, tool: call.params.name }, 'database busy');
          return toolError(new ApiError('DATABASE_BUSY', DATABASE_BUSY_MESSAGE, { headers: { 'retry-after': String(DATABASE_BUSY_RETRY_AFTER_SECONDS) } }));
        }
        context.log.error({ err: error, tool: call.params.name }, 'MCP tool failed');
        throw new McpError(ErrorCode.InternalError, `Internal error. If it persists, contact support quoting request id ${context.requestId}.`);
      }
    });
    const transport = new JsonResponseTransport();
    await server.connect(transport);
    // Not closed: once the answer is made the pair holds nothing (no stream, no timer, no request
    // in flight) and is garbage with this call; closing would only make the SDK build an error
    // for the pending requests it no longer has, a stack trace per request.
    const answer = await transport.exchange(body);
    return { answer, refused };
  }

  /** A tool call, in the API's order of checks: the token's right to the operation, the arguments, then the service. */
  private async call(name: string, args: Record<string, unknown>, context: ToolContext): Promise<CallToolResult> {
    const entry = this.byName.get(name);
    // A name that is no tool's is the protocol's error, not a tool's (MCP, "Error Handling").
    if (entry === undefined) throw new McpError(ErrorCode.InvalidParams, `There is no tool ${JSON.stringify(name.slice(0, 64))}; the tools are ${[...this.byName.keys()].join(', ')}.`);
    const { tool, check } = entry;
    const { principal } = context;
    if (tool.access === 'account' && principal.sandbox) throw liveTokenRequiredError();
    if (tool.access !== 'account' && !canSearch(principal)) throw subscriptionRequiredError();
    if (tool.sandboxRefusal && principal.sandbox) throw tool.sandboxRefusal();
    if (!check.Check(args)) {
      const errors = argumentErrors(check.Errors(args));
      throw new ApiError('VALIDATION_FAILED', Object.values(errors)[0]?.[0] ?? 'The arguments are invalid.', { errors });
    }
    return toolResult(await tool.call(context, args));
  }
}
