// The shapes of hostile matrix files bench/hostile-input.ts validates: each a function of the size
// in bytes it fills (just under it), giving the file's text and the ranks of the CT perftest config
// that names it. Each is built to cost one part of reading a matrix the most: rows by the million,
// one row of millions of cells, the largest square a file of the bound can hold, nothing but
// comments or blank lines.
const fill = (bytes: number, unit: string, head = ''): string => head + unit.repeat(Math.max(0, Math.floor((bytes - head.length) / unit.length)));

/** The largest n whose n x n matrix of `cell` cells (each with a blank after it) fits in `bytes`. */
const largestSquare = (bytes: number, cell: string) => Math.floor(Math.sqrt(bytes / (cell.length + 1)));

function square(bytes: number, cell: string): { ranks: number; text: string } {
  const n = largestSquare(bytes, cell);
  const row = `${`${cell} `.repeat(n - 1)}${cell}\n`;
  return { ranks: n, text: row.repeat(n) };
}

export interface MatrixShape {
  ranks: number;
  text: string;
}

export const matrixShapes: Record<string, (bytes: number) => MatrixShape> = {
  'matrix: one-cell lines': (b) => ({ ranks: 4, text: fill(b, '0\n') }),
  'matrix: one row of cells': (b) => ({ ranks: 4, text: `${fill(b - 1, '0 ')}\n` }),
  'matrix: right-width rows beyond the ranks': (b) => ({ ranks: 4, text: fill(b, '0 0 0 0\n') }),
  'matrix: largest square of 0 (valid)': (b) => square(b, '0'),
  'matrix: largest square of 1.5K (valid; cells truncated)': (b) => square(b, '1.5K'),
  'matrix: comments only': (b) => ({ ranks: 4, text: fill(b, '# a comment line\n') }),
  'matrix: blank lines': (b) => ({ ranks: 4, text: fill(b, '\n') }),
  'matrix: a bad cell at the end': (b) => {
    const { ranks, text } = square(b - 8, '0');
    return { ranks, text: `${text.slice(0, -2)}x\n` };
  },
};
