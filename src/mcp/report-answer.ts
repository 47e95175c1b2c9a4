import type { Lot } from '../domain/lot.ts';
import { reportJson, type Report } from '../domain/report.ts';
import type { SearchOutcome } from '../search/search-service.ts';
import { searchRefusal } from '../http/api/v1/search-answer.ts';
import { count, type ToolAnswer } from './tool.ts';

/**
 * A search's outcome as the tools that mirror a search answer it (search_vin, lookup_lot): the
 * Report the API answers, or its refusal (thrown, as the route throws it).
 */
export function reportAnswer(outcome: SearchOutcome, sandbox: boolean): ToolAnswer {
  if (outcome.kind !== 'found') throw searchRefusal(outcome);
  const jsonText = reportJson(outcome.report);
  const report = JSON.parse(jsonText) as Report;
  return { json: report, jsonText, summary: reportSummary(report, { sandbox, replayed: outcome.replayed }) };
}

const money = (dollars: number) => `$${dollars.toLocaleString('en-US')}`;
const day = (iso: string) => iso.slice(0, 10);

/** One lot in a clause: where, when, for how much, in what state. */
function lotClause(lot: Lot): string {
  const facts = [
    `${lot.auction} lot ${lot.lot_id}`,
    lot.name,
    lot.sale_date === null ? 'no sale date yet' : `sale date ${day(lot.sale_date)}`,
    lot.price === null ? null : `price ${money(lot.price)}`,
    lot.primary_damage === null ? null : `primary damage ${lot.primary_damage}`,
    lot.odometer === null ? null : `odometer ${lot.odometer.toLocaleString('en-US')}${lot.odometer_type ? ` (${lot.odometer_type})` : ''}`,
    lot.document === null ? null : `title ${lot.document}`,
  ];
  return facts.filter((fact) => fact !== null).join(', ');
}

/** The paragraph a model reads first: how many lots, the newest one, the link, and what the call cost. */
export function reportSummary(report: Report, how: { sandbox: boolean; replayed: boolean }): string {
  const auctions = [...new Set(report.lots.map((lot) => lot.auction))].join(', ');
  const [newest] = report.lots;
  const cost = how.sandbox
    ? 'Sandbox token: test data from the sandbox catalogue, not counted against the quota.'
    : how.replayed
      ? 'A repeat of an earlier search with the same idempotency key: the same report, not counted again.'
      : 'Counted as one search against the monthly quota.';
  return [
    `VIN ${report.vin}: ${count(report.lots.length, 'auction lot')} on record (${auctions}), newest sale first.`,
    newest ? `Newest: ${lotClause(newest)}.` : '',
    `Shareable report page: ${report.report_url}.`,
    cost,
    'The full report (every field of every lot, photo URLs) is in the structured content.',
  ]
    .filter((sentence) => sentence !== '')
    .join(' ');
}
