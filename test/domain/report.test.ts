import fastJson from 'fast-json-stringify';
import { describe, expect, test } from 'vitest';
import { LotSchema, lotJson } from '../../src/domain/lot.ts';
import { reportJson, ReportSchema, type Report } from '../../src/domain/report.ts';
import { makeLot } from '../support/fixtures.ts';

/** What the route's serialiser wrote before the lots were spliced: the schema's own. */
const schemaSerialiser = fastJson({ ...ReportSchema, definitions: { Lot: LotSchema } } as never, { schema: { Lot: LotSchema } } as never);

describe('reportJson', () => {
  const report: Report = {
    status: 'success',
    vin: '4JGBF7BE5AA585531',
    origin_timestamp: '2026-11-23T03:45:00.123Z',
    lots: [
      makeLot({ vin: '4JGBF7BE5AA585531', name: 'Quote " and \\ back, ünï 😀', sale_date: '2024-01-01T00:00:00.000Z' }),
      makeLot({ vin: '4JGBF7BE5AA585531', images: ['https://img.example.com/1.jpg'], price: 1200 }),
    ],
    report_url: 'https://reports.example.com/report/7f1c1c1e-3b1f-4c7e-9a51-0c0c3f7b2d11',
  };

  test('writes the same document the schema serialiser writes, lots spliced as their text', () => {
    const text = reportJson({ ...report, lots: report.lots.map(lotJson) });
    expect(text).toBe(schemaSerialiser(report));
    const parsed = JSON.parse(text) as unknown;
    expect(parsed).toEqual(report);
  });

  test('a report with no lots is still a valid document', () => {
    expect(JSON.parse(reportJson({ ...report, lots: [] }))).toEqual({ ...report, lots: [] });
  });
});
