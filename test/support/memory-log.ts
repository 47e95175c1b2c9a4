import { Writable } from 'node:stream';
import pino from 'pino';
import { loggerOptions } from '../../src/observability/logger.ts';

/** A logger with the server's options (redaction included) whose lines the test reads back. */
export function memoryLog(level: 'trace' | 'debug' | 'info' | 'warn' | 'error' = 'info') {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, logger: pino(loggerOptions({ logLevel: level }), stream) };
}
