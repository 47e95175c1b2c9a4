import Fastify from 'fastify';
import { describe, expect, test } from 'vitest';
import { LotSchema, lotJson } from '../../src/domain/lot.ts';
import { reportJson, ReportSchema, type Report } from '../../src/domain/report.ts';
import { makeLot } from '../support/fixtures.ts';

/** What a route's serialiser writes for ReportSchema (the search routes did so before the lots were spliced). */
async function schemaSerialised(report: Report): Promise<string> {
  const app = Fastify();
  app.addSchema(LotSchema);
  app.addSchema(ReportSchema);
  app.get('/', { schema: { response: { 200: { $ref: 'Report#' } } } }, async () => report);
  const response = await app.inject('/');
  await app.close();
  return response.body;
}

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

  test('writes the same document the schema serialiser writes, lots spliced as their text', async () => {
    const text = reportJson({ ...report, lots: report.lots.map(lotJson) });
    expect(text).toBe(await schemaSerialised(report));
    const parsed = JSON.parse(text) as unknown;
    expect(parsed).toEqual(report);
  });

  test('a report with no lots is still a valid document', () => {
    expect(JSON.parse(reportJson({ ...report, lots: [] }))).toEqual({ ...report, lots: [] });
  });
});
