import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, validationError } from '../../../errors.ts';
import type { MarketCallOutcome } from '../../../market/market-calls.ts';
import { answerCounted } from './counted-answer.ts';

/**
 * The query string as sent, parameter by parameter: the catalogue and the market check every
 * parameter themselves (an unknown or repeated one is a 422 too, which the route schema, whose
 * extra properties Ajv removes, would not say).
 */
export function rawQuery(request: FastifyRequest): URLSearchParams {
  const at = request.url.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : request.url.slice(at + 1));
}

/** The refusal of a sandbox token on the catalogue or the market (also the MCP tools', src/mcp/). */
export const marketSandboxError = (): ApiError =>
  new ApiError('LIVE_TOKEN_REQUIRED', 'A sandbox token cannot search the catalogue or value the market: they read live data. Use a live token (vh_live_) of the account.');

/** Catalogue and market read live data: a sandbox token is refused before anything else is checked. */
export function refuseSandbox(request: FastifyRequest): void {
  if (request.principal?.sandbox) throw marketSandboxError();
}

/** A catalogue or market call's outcome as HTTP. */
export function answerMarketCall<T>(reply: FastifyReply, outcome: MarketCallOutcome<T>): FastifyReply {
  return answerCounted(reply, countedOrRefused(outcome));
}

/** A refused parameter as the API answers it (422, errors.<parameter>); any other outcome as it is. Also the MCP tools'. */
export function countedOrRefused<T>(outcome: MarketCallOutcome<T>): Exclude<MarketCallOutcome<T>, { kind: 'invalid_parameter' }> {
  if (outcome.kind === 'invalid_parameter') throw validationError(outcome.field, outcome.messages);
  return outcome;
}
