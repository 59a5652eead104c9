/** Plain aligned columns: readable in a terminal and easy to grep. */
export function table(rows: Array<Record<string, unknown>>, columns: string[]): string {
  const cells = [columns.map((c) => c.toUpperCase()), ...rows.map((r) => columns.map((c) => formatCell(r[c])))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function formatCell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return value.toString();
  return JSON.stringify(value) ?? '-';
}
