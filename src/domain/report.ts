import { Type, type Static } from '@sinclair/typebox';
import { LotSchema, type Lot, type LotJson } from './lot.ts';

/** The answer to a search that found lots. This one schema types the code and documents and serialises the API. */
export const ReportSchema = Type.Object(
  {
    status: Type.Literal('success', { description: 'Always "success" on a 200.' }),
    vin: Type.String({ description: 'The VIN the report is for, normalised (trimmed, upper-case).' }),
    origin_timestamp: Type.String({
      format: 'date-time',
      description: 'When the report was made: ISO 8601, milliseconds, UTC (Z).',
      examples: ['2026-11-21T07:55:12.123Z'],
    }),
    // A reference, so that the document and generated clients have one Lot type, not a copy inside Report.
    lots: Type.Array(Type.Ref(LotSchema), { description: 'Every known auction lot of the vehicle, newest sale first.' }),
    report_url: Type.String({
      format: 'uri',
      description:
        'Shareable report page: {PUBLIC_BASE_URL}/report/<uuid v4>, or {report address}/report/<uuid v4> when the token (else the account) has a white-label brand with a report address of its own. Anyone holding the link can open it.',
    }),
  },
  { $id: 'Report', title: 'Report', additionalProperties: false },
);

export type Report = Static<typeof ReportSchema>;

/** A Report as a search answers it: its lots are the store's JSON text, spliced as they are. */
export type ReportAnswer = Omit<Report, 'lots'> & { lots: LotJson[] };

/**
 * The Report document's JSON, ReportSchema's fields in its order, with the lots spliced in unparsed.
 * A test holds it to what the schema's own serialiser writes.
 */
export function reportJson(report: ReportAnswer): string {
  return `{"status":"success","vin":${JSON.stringify(report.vin)},"origin_timestamp":${JSON.stringify(report.origin_timestamp)},"lots":[${report.lots.join(',')}],"report_url":${JSON.stringify(report.report_url)}}`;
}

/** The snapshot a search stored: what the report page shows, however the lots change later. */
export interface StoredReport {
  id: string;
  accountId: string;
  vin: string;
  createdAt: string;
  lots: Lot[];
  /** True when a sandbox token made it from the sandbox catalogue: the page marks it as a test report. */
  sandbox?: boolean;
  /** The token whose search made it (null for reports made before brands were stored): its brand is the report's. */
  tokenId?: string | null;
  /**
   * For a snapshot that names lot versions (0025): per lot (`auction/lot_id`), how many versions
   * after its first it had when the report was made. Its history is cut there, not by time: a
   * change stored in the same millisecond as the report is after it or not by this count alone.
   */
  namedVersions?: ReadonlyMap<string, number>;
}
