import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readCsvRowsWithCsvParse } from '../../../src/ingest/csv/csv-parse-rows.ts';
import type { CsvRow, CsvRowsOptions } from '../../../src/ingest/csv/csv-row.ts';
import { readCsvRows } from '../../../src/ingest/csv/csv-rows.ts';
import { Prng } from '../../../src/dev/seed/prng.ts';

/** The file as a stream of byte chunks cut at the given sizes (a multi-byte character may be split). */
function streamOf(text: string, cuts: number[] = []): Readable {
  const bytes = Buffer.from(text, 'utf8');
  const chunks: Buffer[] = [];
  let at = 0;
  for (const size of cuts) {
    if (at >= bytes.length) break;
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  if (at < bytes.length) chunks.push(bytes.subarray(at));
  return Readable.from(chunks, { objectMode: false });
}

async function readAll(rows: AsyncIterable<CsvRow>): Promise<{ rows: CsvRow[]; error: string | null }> {
  const seen: CsvRow[] = [];
  try {
    for await (const row of rows) seen.push(row);
    return { rows: seen, error: null };
  } catch (error) {
    return { rows: seen, error: (error as Error).message };
  }
}

const fast = (text: string, cuts: number[] = [], options: CsvRowsOptions = {}) => readAll(readCsvRows(streamOf(text, cuts), options));
const reference = (text: string, options: CsvRowsOptions = {}) => readAll(readCsvRowsWithCsvParse(streamOf(text), options));

describe('readCsvRows', () => {
  it('reads quoted and unquoted fields, doubled quotes, quoted line ends, empty lines, a BOM and CRLF', async () => {
    const text = '\uFEFFid,name,note\r\n"1","A ""quoted"" word","two\nlines"\r\n\r\n2,,plain\r\n3,"é € 😀",""\r\n';
    expect(await fast(text)).toEqual({
      rows: [
        { kind: 'header', line: 1, values: ['id', 'name', 'note'] },
        { kind: 'row', line: 2, values: ['1', 'A "quoted" word', 'two\nlines'], source: '"1","A ""quoted"" word","two\nlines"' },
        { kind: 'row', line: 5, values: ['2', '', 'plain'], source: '2,,plain' },
        { kind: 'row', line: 6, values: ['3', 'é € 😀', ''], source: '3,"é € 😀",""' },
      ],
      error: null,
    });
  });

  it('reports a row with another number of columns and goes on', async () => {
    const text = 'a,b\n1,2\n1,2,3\n"x"\n4,5';
    expect(await fast(text)).toEqual({
      rows: [
        { kind: 'header', line: 1, values: ['a', 'b'] },
        { kind: 'row', line: 2, values: ['1', '2'], source: '1,2' },
        { kind: 'bad', line: 3, reason: 'has 3 columns; the header has 2', source: '1,2,3' },
        { kind: 'bad', line: 4, reason: 'has 1 column; the header has 2', source: '"x"' },
        { kind: 'row', line: 5, values: ['4', '5'], source: '4,5' },
      ],
      error: null,
    });
  });

  it('has csv-parse judge a record that is not plain, and goes on with the next line', async () => {
    const text = 'a,b\n1,"two\nlines"\n\n2,"x" y\n3,ok\n4,"fine"\n';
    const result = await fast(text);
    expect(result).toEqual({
      rows: [
        { kind: 'header', line: 1, values: ['a', 'b'] },
        { kind: 'row', line: 2, values: ['1', 'two\nlines'], source: '1,"two\nlines"' },
        { kind: 'bad', line: 5, reason: 'a quoted field is followed by other text before the next delimiter', source: '2,"x" y' },
        { kind: 'row', line: 6, values: ['3', 'ok'], source: '3,ok' },
        { kind: 'row', line: 7, values: ['4', 'fine'], source: '4,"fine"' },
      ],
      error: null,
    });
    // csv-parse reading the file by itself reports that row twice and loses the two after it.
    expect((await reference(text)).rows.filter((row) => row.kind === 'row')).toHaveLength(1);
    // csv-parse's own words, without its own line count (the row's line is given beside them).
    expect((await fast('a,b\n1,say "hi"\n')).rows[1]).toMatchObject({
      kind: 'bad',
      line: 2,
      reason: 'field 2 has a quote inside it but does not start with one (quote the whole field and double the quotes inside)',
    });
  });

  it('says where a cut file ends, after the rows before the cut', async () => {
    expect(await fast('a,b\n1,2\n3,"fo')).toEqual({
      rows: [
        { kind: 'header', line: 1, values: ['a', 'b'] },
        { kind: 'row', line: 2, values: ['1', '2'], source: '1,2' },
      ],
      error: 'the file ends inside a quoted field opened on line 3: it is truncated (or a stray quote on that line swallowed the rest of the file)',
    });
    expect((await fast('a,b,c\n1,2,3\n\n4,5')).error).toBe('the file ends in the middle of line 4 (has 2 columns; the header has 3): it is truncated');
    // The same number of columns without a line end is a whole last row.
    expect((await fast('a,b\n1,2')).rows.at(-1)).toEqual({ kind: 'row', line: 2, values: ['1', '2'], source: '1,2' });
  });

  it('takes another one-character delimiter', async () => {
    expect((await fast('a;b\n"1;x";2\n', [], { delimiter: ';' })).rows).toEqual([
      { kind: 'header', line: 1, values: ['a', 'b'] },
      { kind: 'row', line: 2, values: ['1;x', '2'], source: '"1;x";2' },
    ]);
  });

  it('a read error of the file surfaces after the rows before it', async () => {
    const failing = Readable.from(
      (async function* () {
        yield Buffer.from('a,b\n1,2\n3,');
        throw new Error('disk gone');
      })(),
      { objectMode: false },
    );
    const result = await readAll(readCsvRows(failing));
    expect(result.rows.map((row) => row.line)).toEqual([1, 2]);
    expect(result.error).toBe('disk gone');
  });
});

/** Fields as written in a file and the value each stands for. */
const GOOD_FIELDS: [string, string][] = [
  ['', ''], ['x', 'x'], ['two words', 'two words'], ['12.5', '12.5'], ['é€😀', 'é€😀'], [' padded ', ' padded '],
  ['tab\tx', 'tab\tx'], ['a\rb', 'a\rb'], ['"q"', 'q'], ['"a,b"', 'a,b'], ['"say ""hi"""', 'say "hi"'], ['""', ''],
  ['"line\nbreak"', 'line\nbreak'], ['"cr\r\nlf"', 'cr\r\nlf'], ['"lone\rcr"', 'lone\rcr'], ['"x,\n"', 'x,\n'],
];
/** Fields csv-parse refuses, each within one line. */
const BAD_FIELDS = ['say "hi"', '5" tire', '"x" y', '"x"y', '"a"",b" c'];

interface Expected {
  text: string;
  rows: CsvRow[];
}

/** A random file and the rows it holds, known from how it was written. */
function randomFile(rng: Prng): Expected {
  const width = rng.int(1, 5);
  const eol = rng.chance(0.4) ? '\r\n' : '\n';
  const headerValues = Array.from({ length: width }, (_, i) => `col ${i}`);
  const lines: string[] = [headerValues.map((name) => (rng.chance(0.3) ? `"${name}"` : name)).join(',')];
  const rows: CsvRow[] = [{ kind: 'header', line: 1, values: headerValues }];
  let line = 2;
  for (let r = rng.int(0, 14); r > 0; r--) {
    let text: string;
    const roll = rng.next();
    if (roll < 0.08) {
      text = '';
    } else if (roll < 0.2) {
      const fields = Array.from({ length: width }, () => rng.pick(GOOD_FIELDS)[0]);
      fields[rng.int(0, width - 1)] = rng.pick(BAD_FIELDS);
      text = fields.join(',');
      rows.push({ kind: 'bad', line, reason: expect.any(String) as string, source: text });
    } else {
      const columns = rng.chance(0.1) ? rng.int(1, 6) : width;
      const fields = Array.from({ length: columns }, () => rng.pick(GOOD_FIELDS));
      text = fields.map(([written]) => written).join(',');
      if (text === '') {
        // One empty field is an empty line.
      } else if (columns === width) rows.push({ kind: 'row', line, values: fields.map(([, value]) => value), source: text });
      else rows.push({ kind: 'bad', line, reason: `has ${columns} column${columns === 1 ? '' : 's'}; the header has ${width}`, source: text });
    }
    lines.push(text);
    line += 1 + (text.match(/\n/g)?.length ?? 0);
  }
  let text = (rng.chance(0.1) ? '\uFEFF' : '') + lines.map((l) => l + eol).join('');
  // Without the last line end, a last row is still whole (one with too few or too many columns is where the file was cut).
  const last = rows.at(-1)!;
  if (rng.chance(0.3) && !text.endsWith(eol + eol) && lines.length > 1 && !(last.kind === 'bad' && typeof last.reason === 'string' && last.reason.startsWith('has '))) {
    text = text.slice(0, -eol.length);
  }
  return { text, rows };
}

describe('readCsvRows on random files', () => {
  it('reads every good row and reports every bad one once, at its line, however the bytes arrive', async () => {
    const rng = new Prng(7);
    let bad = 0;
    for (let n = 0; n < 3000; n++) {
      const { text, rows } = randomFile(rng);
      const cuts = rng.chance(0.5) ? Array.from({ length: 40 }, () => rng.int(1, 9)) : [];
      expect(await fast(text, cuts), `file ${n}: ${JSON.stringify(text)}`).toEqual({ rows, error: null });
      bad += rows.filter((row) => row.kind === 'bad').length;
    }
    expect(bad).toBeGreaterThan(500);
  });

  it('reads what csv-parse reads in files without a bad row', async () => {
    const rng = new Prng(8);
    for (let n = 0; n < 500; n++) {
      const { text, rows } = randomFile(rng);
      if (rows.some((row) => row.kind === 'bad')) continue;
      const values = (rows: CsvRow[]) => rows.map((row) => (row.kind === 'bad' ? row.reason : row.values));
      expect(values((await fast(text)).rows), JSON.stringify(text)).toEqual(values((await reference(text)).rows));
    }
  });

  it('keeps the rows before a cut, and says the file is truncated when the cut shows', async () => {
    const rng = new Prng(9);
    let truncated = 0;
    for (let n = 0; n < 1000; n++) {
      const { text, rows } = randomFile(rng);
      const cutAt = rng.int(0, text.length);
      const cut = text.slice(0, cutAt);
      const result = await fast(cut);
      const cutLine = 1 + (cut.match(/\n/g)?.length ?? 0);
      // Every row that ends before the line the cut falls on is read as in the whole file.
      const whole = rows.filter((row) => row.line < cutLine && row.line + (('source' in row ? row.source : '').match(/\n/g)?.length ?? 0) < cutLine);
      expect(result.rows.slice(0, whole.length), JSON.stringify(cut)).toEqual(whole);
      if (result.error !== null) {
        expect(result.error).toMatch(/^the file ends (inside a quoted field opened on|in the middle of) line \d+/);
        truncated++;
      }
    }
    expect(truncated).toBeGreaterThan(100);
  });
});
