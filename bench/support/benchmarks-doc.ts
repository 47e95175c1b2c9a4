import { readFile, writeFile } from 'node:fs/promises';

/**
 * docs/benchmarks.md keeps the latest figures of each benchmark between a pair of markers, so a
 * benchmark run with --write replaces its own figures and leaves the prose and the other
 * benchmarks' sections alone.
 */
export async function replaceDocSection(file: string, name: string, heading: string, body: string): Promise<void> {
  const begin = `<!-- bench:${name}:begin -->`;
  const end = `<!-- bench:${name}:end -->`;
  const block = `${begin}\n${body.trim()}\n${end}`;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    text = '# Benchmarks\n';
  }
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from >= 0 && to > from) {
    text = `${text.slice(0, from)}${block}${text.slice(to + end.length)}`;
  } else if (from >= 0 || to >= 0) {
    throw new Error(`${file} has only one of the markers ${begin} and ${end}; fix it by hand`);
  } else {
    text = `${text.trimEnd()}\n\n${heading}\n\n${block}\n`;
  }
  await writeFile(file, text);
}
