import type { Lot } from '../domain/lot.ts';
import { describeFieldErrors, normaliseLot, type FieldError } from './normalise-lot.ts';
import type { SourceRecord } from './sources/source-record.ts';

export type PreparedRecord =
  | { ok: true; line: number; lot: Lot }
  | { ok: false; line: number; reason: string; source?: string };

/**
 * One record of any format to a Lot, or the reason it cannot be one: what the format could not map
 * first, then whatever normalisation finds wrong with the other fields, so that one line of the
 * report names every problem of the record.
 */
export function prepareRecord(record: SourceRecord): PreparedRecord {
  if ('error' in record) return withSource({ ok: false, line: record.line, reason: record.error }, record.source);
  const result = normaliseLot(record.raw);
  const problems = record.problems ?? [];
  if (result.ok && problems.length === 0) return { ok: true, line: record.line, lot: result.lot };
  // A field the format already refused was passed on as null; its "is required" would repeat it.
  const named = new Set(problems.map((problem) => problem.field));
  const errors: FieldError[] = [...problems, ...(result.ok ? [] : result.errors.filter((error) => !named.has(error.field)))];
  return withSource({ ok: false, line: record.line, reason: describeFieldErrors(errors) }, record.source);
}

function withSource(prepared: PreparedRecord & { ok: false }, source: string | undefined): PreparedRecord {
  return source === undefined ? prepared : { ...prepared, source };
}
