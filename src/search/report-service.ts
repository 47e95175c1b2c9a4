import { isReportId } from '../domain/ids.ts';
import type { StoredReport } from '../domain/report.ts';
import type { ReportsRepository } from '../storage/repositories/reports-repository.ts';

/** The reports searches stored, for their shareable pages. */
export class ReportService {
  constructor(private readonly reports: ReportsRepository) {}

  /** The report with this id; undefined for an unknown id or for anything that is not a report id. */
  async find(id: string): Promise<StoredReport | undefined> {
    return isReportId(id) ? this.reports.findById(id) : undefined;
  }
}
