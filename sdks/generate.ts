import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { migrateToLatest, openDatabase } from '../src/storage/database.ts';
import { generateSdks } from './generator/index.ts';
import type { Json } from './generator/openapi-model.ts';

/**
 * `npm run sdks:generate`: writes the generated files of both SDKs from the customers' OpenAPI
 * document, as the service builds it from its route schemas (on an empty SQLite database in
 * memory; nothing listens). `--check` writes nothing and exits 1, naming the files, when the
 * committed ones differ from what the document makes.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));

export async function customerDocument(): Promise<Json> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'vinhistory-sdks-'));
  const db = await openDatabase({ kind: 'sqlite', file: ':memory:' });
  try {
    await migrateToLatest(db);
    const config = loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: 'https://api.example.com', DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const services = createContainer({ config, db, log: pino({ level: 'silent' }) });
    const app = await buildApp({ services, logger: false });
    try {
      await app.ready();
      return app.customerOpenApi();
    } finally {
      await app.close();
      await services.close();
    }
  } finally {
    await db.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The generated files that differ from the ones in the repository. */
export function driftedFiles(files: Map<string, string>, root = ROOT): string[] {
  const drifted: string[] = [];
  for (const [file, content] of files) {
    let committed: string | null = null;
    try {
      committed = readFileSync(path.join(root, file), 'utf8');
    } catch {
      committed = null;
    }
    if (committed !== content) drifted.push(file);
  }
  return drifted;
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const files = generateSdks(await customerDocument());
  if (check) {
    const drifted = driftedFiles(files);
    if (drifted.length) {
      console.error(`The SDKs are behind the OpenAPI document: ${drifted.join(', ')}. Run npm run sdks:generate.`);
      process.exit(1);
    }
    console.log('The SDKs match the OpenAPI document.');
    return;
  }
  for (const [file, content] of files) {
    mkdirSync(path.dirname(path.join(ROOT, file)), { recursive: true });
    writeFileSync(path.join(ROOT, file), content);
    console.log(`wrote ${file}`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
