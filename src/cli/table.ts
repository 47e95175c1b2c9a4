export interface Column {
  header: string;
  align?: 'left' | 'right';
}

/** A plain-text table for terminals: padded columns, a rule under the header, no trailing spaces. */
export function formatTable(columns: Column[], rows: string[][]): string {
  const widths = columns.map((column, index) => Math.max(column.header.length, ...rows.map((row) => (row[index] ?? '').length)));
  const line = (row: string[]) =>
    columns
      .map((column, index) => {
        const cell = row[index] ?? '';
        return column.align === 'right' ? cell.padStart(widths[index]!) : cell.padEnd(widths[index]!);
      })
      .join('  ')
      .trimEnd();
  const header = line(columns.map((column) => column.header));
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [header, rule, ...rows.map(line)].join('\n') + '\n';
}
