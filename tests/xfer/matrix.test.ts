import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkMatrixText, parseMatrix, parseMatrixText, readMatrix, formatMatrix, rowSum, colSum, senders, truncationNote } from '../../runners/xfer/matrix.ts';

/**
 * Cells and the bytes kvbench's parse_size gives them (NIXL benchmark/kvbench/main.py at
 * 8770b655a6b17b5cdf7d2b56b6e0be5392496df5: unit from the last letter, int(unit * float(rest))),
 * computed by running that function on these tokens.
 */
const KVBENCH_CELL_BYTES: Record<string, number> = {
  '3.53G': 3790308638, '1.5M': 1572864, '0.3K': 307, '5K': 5120, '2g': 2147483648, '7B': 7, '1e3': 1000,
  '937.5M': 983040000, '2.07G': 2222645575, '0.1k': 102, '12': 12, '1_000': 1000, '.5K': 512, '5.': 5,
  '+3M': 3145728, '1e-3G': 1073741, '12.99': 12,
};

describe('transfer matrices', () => {
  it('a matrix is checked row by row: its size without holding a cell, and a file of millions of rows refused at the first that cannot fit', () => {
    expect(checkMatrixText('0 1M\n2K 0\n', 'm.txt', 2)).toBe(2);
    const ones = '0\n'.repeat(1 << 20);
    expect(() => checkMatrixText(ones, 'm.txt', 4)).toThrow(`m.txt:1:1 row 0 has 1 cells; a ${1 << 20}-row matrix must be square`);
    expect(() => checkMatrixText('0 0\n0 0\n'.repeat(1 << 18), 'm.txt', 2)).toThrow(`m.txt:3:1 row 2 has 2 cells; a ${1 << 19}-row matrix must be square`);
    expect(() => checkMatrixText(`${'0 '.repeat(1 << 20)}\n`, 'm.txt')).toThrow(`m.txt:1:1 row 0 has ${1 << 20} cells; a 1-row matrix must be square`);
  });

  it('reads the seed example with binary units', () => {
    const m = parseMatrix('0 0 1M 1M\n0 0 1M 1M\n0 0 0 5K\n0 0 0 5K\n', 'seed.txt', 4);
    expect(m[0]).toEqual([0, 0, 1048576, 1048576]);
    expect(m[3][3]).toBe(5120);
    expect(rowSum(m, 0)).toBe(2097152);
    expect(colSum(m, 3)).toBe(2 * 1048576 + 2 * 5120);
    expect(senders(m)).toEqual([0, 1, 2, 3]);
  });

  it('cells may be separated by tabs', () => {
    expect(parseMatrix('1\t2\n3 4', 'x')).toEqual([[1, 2], [3, 4]]);
  });

  it('names file, line, column and token of a bad cell', () => {
    expect(() => parseMatrix('0 1K\n0 12Q\n', 'bad.txt')).toThrow(/^bad\.txt:2:3 '12Q' is not a size/);
    expect(() => parseMatrix('0 1K\n# comment\n  0 -5\n', 'neg.txt')).toThrow(/^neg\.txt:3:5 '-5' is negative: a size is 0 bytes or more \(row 1, column 1\)$/);
  });

  it("reads every cell as kvbench does: Python float syntax, K/M/G/B, truncated to whole bytes (int())", () => {
    const tokens = Object.keys(KVBENCH_CELL_BYTES);
    const { matrix } = parseMatrixText(tokens.join(' ').concat('\n').repeat(tokens.length), 'kv.txt');
    expect(matrix[0]).toEqual(Object.values(KVBENCH_CELL_BYTES));
  });

  it('says once per file how many cells were truncated and how many bytes that dropped', () => {
    const read = parseMatrixText('0 3.53G 1K\n0.5 0 2.07G\n0 0 0\n', 'up.txt', 3);
    expect(read.matrix).toEqual([[0, 3790308638, 1024], [0, 0, 2222645575], [0, 0, 0]]);
    expect(read.truncation).toMatchObject({ cells: 3, first: { token: '3.53G', row: 0, col: 1 } });
    expect(read.truncation!.droppedBytes).toBeCloseTo(0.72 + 0.5 + 0.68, 3);
    expect(truncationNote('up.txt', read.truncation!)).toBe(
      "up.txt: 3 cell(s) are not whole bytes (the first: '3.53G' at row 0, column 1 = 3790308638.72 bytes); truncated to whole bytes as kvbench does (int()), 1.9 byte(s) dropped in all",
    );
    expect(parseMatrixText('0 1M\n1.5M 0\n', 'whole.txt').truncation).toBeUndefined();
  });

  it('a cell too large to be a safe integer says so, with file, line, column, row and column', () => {
    expect(() => parseMatrix('0 1K\n999999999999G 0\n', 'big.txt')).toThrow(
      "big.txt:2:1 '999999999999G' is too large to be a safe integer: 1073741823998926258176 bytes is more than 2^53 - 1 = 9007199254740991, the largest byte count held exactly (row 1, column 0)",
    );
    expect(parseMatrix('0 8388607G\n0 0\n', 'edge.txt')[0][1]).toBe(8388607 * 1024 ** 3); // < 2^53: exact
  });

  it('refuses a ragged matrix and a size that does not match the ranks', () => {
    expect(() => parseMatrix('0 1\n0 1 2\n', 'r.txt')).toThrow(/r\.txt:2:1 row 1 has 3 cells/);
    expect(() => parseMatrix('0 1\n1 0\n', 'n.txt', 4)).toThrow(/2 x 2 but the run has 4 ranks/);
    expect(() => parseMatrix('\n# only\n', 'e.txt')).toThrow(/empty/);
    expect(() => readMatrix('/nonexistent/m.txt')).toThrow(/the matrix file cannot be read: no such file \(ENOENT\)/);
  });

  it('round-trips exact bytes through formatMatrix', () => {
    const m = [[0, 123456789], [5, 0]];
    const dir = mkdtempSync(path.join(tmpdir(), 'matrix-'));
    writeFileSync(path.join(dir, 'm.txt'), formatMatrix(m));
    expect(readMatrix(path.join(dir, 'm.txt'), 2)).toEqual(m);
  });
});
