import { stringify } from 'csv-stringify/sync';
import { describeInput, type BatchItem } from '../domain/batch.ts';
import { LOT_FIELDS, type Lot } from '../domain/lot.ts';

/**
 * A batch's results as the contract writes them: one NDJSON line per item in input order, or CSV
 * with one row per lot (an item without lots is one row with its status and message).
 */

/** An item as its NDJSON line (with the newline): `report` the Report as the search answered it. */
export function itemLine(item: BatchItem): string {
  const report =
    item.result?.status === 200 && item.report !== null && item.result.reportUrl !== null
      ? { status: 'success', vin: item.report.vin, origin_timestamp: item.report.createdAt, lots: item.report.lots, report_url: item.result.reportUrl }
      : null;
  return `${JSON.stringify({ index: item.index, input: item.input, status: item.result?.status ?? null, report, message: item.result?.message ?? null })}\n`;
}

export const CSV_COLUMNS = ['index', 'input', 'status', 'message', 'report_url', ...LOT_FIELDS] as const;

export function csvHeader(): string {
  return stringify([[...CSV_COLUMNS]]);
}

/** An item's CSV rows: one per lot of its report, or one without lot fields. */
export function itemRows(item: BatchItem): string {
  const head = [item.index, describeInput(item.input), item.result?.status ?? '', item.result?.message ?? '', item.result?.reportUrl ?? ''];
  const lots = (item.report?.lots ?? []) as Lot[];
  if (lots.length === 0) return stringify([head]);
  return stringify(lots.map((lot) => [...head, ...LOT_FIELDS.map((field) => cell(lot[field]))]));
}

function cell(value: unknown): string | number {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.join(' ');
  if (typeof value === 'number') return value;
  return typeof value === 'string' ? value : JSON.stringify(value);
}
