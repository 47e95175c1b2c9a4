import { createWriteStream, type WriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { RejectedRecord } from './import-summary.ts';

/**
 * The --report file: one JSON object per skipped record, `{"file", "line", "reason", "record"}`,
 * where `record` is the record as its file had it (a CSV row's text, an NDJSON line, a vendor
 * record), so that the rows can be fixed and imported again.
 */
export class SkippedReport {
  private constructor(
    private readonly stream: WriteStream,
    private failure: Error | null = null,
  ) {
    stream.on('error', (error) => (this.failure ??= error));
  }

  /** Creates (or empties) the file at once: an empty report says that nothing was skipped. */
  static async open(file: string): Promise<SkippedReport> {
    const stream = createWriteStream(file, { flags: 'w' });
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
    return new SkippedReport(stream);
  }

  write(file: string, rejected: RejectedRecord): void {
    this.stream.write(`${JSON.stringify({ file, line: rejected.line, reason: rejected.reason, record: rejected.source ?? null })}\n`);
  }

  async close(): Promise<void> {
    this.stream.end();
    await finished(this.stream).catch((error: Error) => (this.failure ??= error));
    if (this.failure) throw this.failure;
  }
}
