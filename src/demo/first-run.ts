import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Repositories } from '../repositories/index.ts';

export interface FirstRunOptions {
  config: Config;
  repos: Repositories;
  log: FastifyBaseLogger;
}

/** Placeholder until the demo data set lands: does nothing. */
export async function ensureDemoData(_options: FirstRunOptions): Promise<void> {}
