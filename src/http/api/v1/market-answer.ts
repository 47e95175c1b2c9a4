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

/** Catalogue and market read live data: a sandbox token is refused before anything else is checked. */
export function refuseSandbox(request: FastifyRequest): void {
  if (request.principal?.sandbox) {
    throw new ApiError('LIVE_TOKEN_REQUIRED', 'A sandbox token cannot search the catalogue or value the market: they read live data. Use a live token (vh_live_) of the account.');
  }
}

/** A catalogue or market call's outcome as HTTP. */
export function answerMarketCall<T>(reply: FastifyReply, outcome: MarketCallOutcome<T>): FastifyReply {
  if (outcome.kind === 'invalid_parameter') throw validationError(outcome.field, outcome.messages);
  return answerCounted(reply, outcome);
}
