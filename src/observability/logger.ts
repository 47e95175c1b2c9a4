import pino, { type Logger, type LoggerOptions } from 'pino';
import type { Config } from '../config.ts';

/** Tokens travel in Authorization, sessions in Cookie: neither may reach a log line. */
export function loggerOptions(config: Pick<Config, 'logLevel'>): LoggerOptions {
  return {
    level: config.logLevel,
    redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["idempotency-key"]'],
  };
}

export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino(loggerOptions(config));
}
