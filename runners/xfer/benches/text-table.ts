// Plain-text tables in tabulate's "simple" style (what kvbench prints): right-aligned columns
// (numbers), each at least 2 wider than its header, a dashed rule under the header.

export function formatTable(headers: string[], rows: (string | number)[][]): string {
  const text = rows.map((row) => row.map(String));
  const widths = headers.map((h, i) => text.reduce((w, r) => Math.max(w, (r[i] ?? '').length), h.length + 2));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i])).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...text.map(line)].join('\n');
}

/** 3 decimals, the tables' precision. */
export const f3 = (value: number): string => value.toFixed(3);
