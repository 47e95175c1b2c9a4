import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { emptySummary } from '../../src/ingest/import-summary.ts';
import { startProgress } from '../../src/ingest/progress.ts';

function capture(): { out: PassThrough & { isTTY?: boolean }; text: () => string } {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { out, text: () => text };
}

describe('import progress', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('prints a plain line every interval when stderr is not a terminal: rows, rate, share of the file and time left', async () => {
    vi.useFakeTimers();
    const { out, text } = capture();
    const summary = emptySummary();
    let bytes = 0;
    const progress = startProgress({ label: 'lots.ndjson', summary, bytesRead: () => bytes, totalBytes: 4 * 1024 * 1024 }, { out, intervalMs: 5000 });
    vi.advanceTimersByTime(4999);
    expect(text()).toBe(''); // a quick import prints nothing
    summary.read = 25_000;
    bytes = 1024 * 1024;
    vi.advanceTimersByTime(1);
    progress.log('lots.ndjson:7: vin: is required');
    progress.stop();
    vi.advanceTimersByTime(20_000);
    const lines = text().trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^lots\.ndjson: 25,000 rows, [\d,]+ rows\/s, 25\.0% of 4\.0 MiB, about \d+s left$/);
    expect(lines[1]).toBe('lots.ndjson:7: vin: is required');
  });

  it('counts rows against a total of rows, and leaves out the share when the size is unknown', () => {
    vi.useFakeTimers();
    const rows = capture();
    const summary = emptySummary();
    const seed = startProgress({ label: 'seed', summary, bytesRead: () => summary.read, totalBytes: 1000, unit: 'rows' }, { out: rows.out, intervalMs: 1000 });
    summary.read = 500;
    vi.advanceTimersByTime(1000);
    seed.stop();
    expect(rows.text()).toMatch(/^seed: 500 rows, [\d,]+ rows\/s, 50\.0% of 1,000 rows, about \d+s left\n$/);

    const stdin = capture();
    const piped = startProgress({ label: 'stdin', summary }, { out: stdin.out, intervalMs: 1000 });
    vi.advanceTimersByTime(1000);
    piped.stop();
    expect(stdin.text()).toMatch(/^stdin: 500 rows, [\d,]+ rows\/s\n$/);
  });

  it('prints nothing but the logged lines when disabled', () => {
    vi.useFakeTimers();
    const { out, text } = capture();
    const progress = startProgress({ label: 'x', summary: emptySummary() }, { out, enabled: false, intervalMs: 10 });
    vi.advanceTimersByTime(100);
    progress.log('x:1: bad');
    progress.stop();
    expect(text()).toBe('x:1: bad\n');
  });
});
