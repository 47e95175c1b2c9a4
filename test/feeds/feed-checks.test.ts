import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { comparisonRefusal, contentRefusal, formatRefusal } from '../../src/feeds/feed-checks.ts';

const BOT_WALL = readFileSync(new URL('../fixtures/copart/bot-wall.csv', import.meta.url), 'utf8');
const lastGood = { etag: null, lastModified: null, bytes: 100_000, rows: 1000, header: '"Lot number","VIN"', startedAt: null };

describe('what refuses a pulled file', () => {
  it('an HTML page whatever its Content-Type, a bot challenge named as one, and text/html', () => {
    expect(contentRefusal(BOT_WALL, 'text/csv; charset=utf-8')).toMatch(/^a bot-challenge page, not the feed \(served as text\/csv\)/);
    expect(contentRefusal('<html><body>Please log in</body></html>', 'text/csv')).toMatch(/^an HTML page, not the feed/);
    expect(contentRefusal('"Lot number","VIN"\n', 'text/html')).toMatch(/Content-Type text\/html/);
    expect(contentRefusal('', 'text/csv')).toBe('the file is empty');
    expect(contentRefusal('"Lot number","VIN"\n1,2\n', 'text/csv')).toBeNull();
  });

  it('a file of another format than the feed\'s', () => {
    expect(formatRefusal('ndjson', '"Lot number","VIN"\n')).toMatch(/^the feed is ndjson but the file is not JSON/);
    expect(formatRefusal('copart-csv', '{"vin":"x"}\n')).toBe('the feed is copart-csv but the file is JSON');
    expect(formatRefusal('auto', '{"vin":"x"}\n')).toBeNull();
  });

  it('fewer than half the rows or bytes of the last good pull, or a changed header; small feeds are not compared', () => {
    expect(comparisonRefusal({ bytes: 99_000, rows: 990, header: lastGood.header }, lastGood)).toBeNull();
    expect(comparisonRefusal({ bytes: 40_000, rows: 499, header: lastGood.header }, lastGood)).toBe('truncated: 499 rows where the last good pull had 1000 (below 50% of it)');
    expect(comparisonRefusal({ bytes: 40_000, rows: 900, header: lastGood.header }, lastGood)).toMatch(/^truncated: 40000 bytes/);
    expect(comparisonRefusal({ bytes: 100, rows: 0, header: lastGood.header }, lastGood)).toBe('the file has no rows where the last good pull had 1000');
    expect(comparisonRefusal({ bytes: 99_000, rows: 990, header: '"VIN","Lot number"' }, lastGood)).toBe('the CSV header changed: the same columns in another order');
    expect(comparisonRefusal({ bytes: 10, rows: 1, header: null }, { ...lastGood, rows: 19, bytes: 2000 })).toBeNull();
  });
});
