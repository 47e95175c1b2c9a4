/**
 * Where the test suite's time goes, from vitest's JSON report: the sum of the files' durations,
 * the span from the first file's start to the last one's end, and the slowest files. Given a
 * second report (the same files run before a change, in the same conditions), each file's
 * duration beside its earlier one.
 *
 * The figure of record for the suite is `time npm test` on a quiet machine (README's command);
 * this is the breakdown behind it. On a shared machine compare only runs taken side by side.
 *
 * Usage:
 *   CI=true TEST_POSTGRES_URL=... TEST_REDIS_URL=... npx vitest run --reporter=default \
 *     --reporter=json --outputFile.json=.bench/suite.json
 *   npm run bench:suite-files -- .bench/suite.json [.bench/suite-before.json] [--top 20]
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';

interface Report {
  numTotalTests: number;
  numFailedTests: number;
  testResults: { name: string; startTime: number; endTime: number; status: string }[];
}

const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '20' } }, allowPositionals: true });
if (positionals.length < 1 || positionals.length > 2) throw new Error('give one vitest JSON report, or two (after, before)');
const [after, before] = positionals.map((file) => JSON.parse(readFileSync(file, 'utf8')) as Report);

/** Seconds each file took, by its path under the repository. */
function durations(report: Report): Map<string, number> {
  return new Map(report.testResults.map((file) => [relative(process.cwd(), file.name), (file.endTime - file.startTime) / 1000]));
}

function summary(label: string, report: Report): void {
  const files = [...durations(report).values()];
  const span = (Math.max(...report.testResults.map((f) => f.endTime)) - Math.min(...report.testResults.map((f) => f.startTime))) / 1000;
  const sum = files.reduce((total, seconds) => total + seconds, 0);
  console.log(`${label}: ${files.length} files, ${report.numTotalTests} tests (${report.numFailedTests} failed); sum of file durations ${sum.toFixed(1)} s; first start to last end ${span.toFixed(1)} s`);
}

summary('report', after!);
if (before) summary('before', before);
const now = durations(after!);
const then = before ? durations(before) : new Map<string, number>();
const top = [...now].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top));
for (const [file, seconds] of top) {
  const earlier = then.get(file);
  console.log(`${seconds.toFixed(1).padStart(8)} s${earlier === undefined ? '' : `  (before ${earlier.toFixed(1)} s)`}  ${file}`);
}
