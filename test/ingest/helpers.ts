import { createReadStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Readable } from 'node:stream';
import { openLotSource, type LotSourceOptions } from '../../src/ingest/sources/open-lot-source.ts';
import { prepareRecord, type PreparedRecord } from '../../src/ingest/prepare-lot.ts';

export const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

export function streamOf(content: string | Buffer, chunkSize = 0): Readable {
  if (chunkSize <= 0) return Readable.from([typeof content === 'string' ? Buffer.from(content) : content]);
  const buffer = typeof content === 'string' ? Buffer.from(content) : content;
  const chunks: Buffer[] = [];
  for (let i = 0; i < buffer.length; i += chunkSize) chunks.push(buffer.subarray(i, i + chunkSize));
  return Readable.from(chunks);
}

export interface ReadResult {
  description: string;
  prepared: PreparedRecord[];
  /** The error that stopped reading part-way, if any. */
  failure: Error | null;
}

/** Everything the importer would get from a file, without a database: lots and refusals in order. */
export async function readPrepared(input: Readable | string, options: LotSourceOptions = {}): Promise<ReadResult> {
  const source = await openLotSource(typeof input === 'string' ? createReadStream(input) : input, options);
  const prepared: PreparedRecord[] = [];
  let failure: Error | null = null;
  try {
    for await (const record of source.records) prepared.push(prepareRecord(record));
  } catch (error) {
    failure = error as Error;
  }
  return { description: source.description, prepared, failure };
}

export const lotsOf = (result: ReadResult) => result.prepared.flatMap((p) => (p.ok ? [p.lot] : []));
export const rejectionsOf = (result: ReadResult) => result.prepared.flatMap((p) => (p.ok ? [] : [{ line: p.line, reason: p.reason }]));
