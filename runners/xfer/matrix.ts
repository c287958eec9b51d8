// Transfer matrices: N x N, row i = sender, column j = receiver, cell = bytes i sends to j.
// Cells are read as kvbench reads them (NIXL benchmark/kvbench main.py, parse_size): a number as
// Python's float() takes it (1024, 1.5, .5, 1e3, 1_000) with an optional last-letter unit K, M, G
// (BINARY: 1024, 1024^2, 1024^3) or B, any case, truncated to whole bytes as int() does: `3.53G` is
// 3790308638 bytes; the reader says once per file how many bytes that dropped. Beyond kvbench:
// KiB/MiB/GiB, `#` comments and blank lines are accepted, negative cells and counts past 2^53 - 1
// (not exact as a number) are refused. UCC's alltoallv perftest reads M/G as 1e6/1e9: this does not.
import { readFileSync } from 'node:fs';

export type TransferMatrix = number[][];

export class MatrixError extends Error {
  constructor(
    message: string,
    readonly file: string,
    readonly line?: number,
    readonly col?: number,
  ) {
    super(line === undefined ? `${file}: ${message}` : `${file}:${line}:${col} ${message}`);
    this.name = 'MatrixError';
  }
}

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
};
const DIGITS = String.raw`\d(?:_?\d)*`;
/** A Python float literal (sign, underscores between digits, exponent), then a unit. */
const SIZE = new RegExp(String.raw`^([+-]?(?:(?:${DIGITS})?\.${DIGITS}|${DIGITS}\.?)(?:[eE][+-]?${DIGITS})?)([a-zA-Z]*)$`);

/** The value a size token stands for, in bytes, maybe fractional; throws a message without position. */
function sizeValue(token: string): number {
  const match = SIZE.exec(token);
  const unit = match ? UNITS[match[2].toLowerCase()] : undefined;
  if (!match || unit === undefined) {
    throw new Error(`'${token}' is not a size (bytes, or a number with a unit K, M, G = 1024, 1024^2, 1024^3, or B)`);
  }
  const value = Number(match[1].replace(/_/g, '')) * unit; // as kvbench: unit * float(number)
  if (value < 0) throw new Error(`'${token}' is negative: a size is 0 bytes or more`);
  if (!(Math.trunc(value) <= Number.MAX_SAFE_INTEGER)) {
    const bytes = Number.isFinite(value) ? BigInt(Math.trunc(value)).toString() : String(value);
    throw new Error(`'${token}' is too large to be a safe integer: ${bytes} bytes is more than 2^53 - 1 = ${Number.MAX_SAFE_INTEGER}, the largest byte count held exactly`);
  }
  return value;
}

/** Bytes of a size option or config value: whole bytes only ('0.3K' is refused, not truncated). */
export function parseSize(token: string): number {
  const value = sizeValue(token);
  if (!Number.isInteger(value)) throw new Error(`'${token}' is not a whole number of bytes (${value})`);
  return value;
}

/** A matrix cell as kvbench reads it: truncated to whole bytes (int()); `dropped` is the fraction cut off. */
export function parseMatrixCell(token: string): { bytes: number; dropped: number } {
  const value = sizeValue(token);
  const bytes = Math.trunc(value);
  return { bytes, dropped: value - bytes };
}

/** Cells that were not whole bytes: how many, the bytes cut off in all, the first of them. */
export interface MatrixTruncation {
  cells: number;
  droppedBytes: number;
  first: { token: string; row: number; col: number; value: number };
}

export interface ParsedMatrix {
  matrix: TransferMatrix;
  truncation?: MatrixTruncation;
}

export function parseMatrixText(text: string, file: string, expectedRanks?: number): ParsedMatrix {
  const rows: TransferMatrix = [];
  const rowLines: number[] = [];
  let truncation: MatrixTruncation | undefined;
  text.split(/\r?\n/).forEach((line, index) => {
    const content = line.replace(/#.*$/, '');
    if (!content.trim()) return;
    const row: number[] = [];
    for (const match of content.matchAll(/\S+/g)) {
      const at = { row: rows.length, col: row.length };
      let cell: { bytes: number; dropped: number };
      try {
        cell = parseMatrixCell(match[0]);
      } catch (err) {
        throw new MatrixError(`${(err as Error).message} (row ${at.row}, column ${at.col})`, file, index + 1, match.index! + 1);
      }
      if (cell.dropped > 0) {
        truncation ??= { cells: 0, droppedBytes: 0, first: { token: match[0], ...at, value: cell.bytes + cell.dropped } };
        truncation.cells++;
        truncation.droppedBytes += cell.dropped;
      }
      row.push(cell.bytes);
    }
    rows.push(row);
    rowLines.push(index + 1);
  });
  if (rows.length === 0) throw new MatrixError('the matrix is empty', file);
  rows.forEach((row, i) => {
    if (row.length !== rows.length) {
      throw new MatrixError(`row ${i} has ${row.length} cells; a ${rows.length}-row matrix must be square`, file, rowLines[i], 1);
    }
  });
  if (expectedRanks !== undefined && rows.length !== expectedRanks) {
    throw new MatrixError(`the matrix is ${rows.length} x ${rows.length} but the run has ${expectedRanks} ranks`, file);
  }
  return { matrix: rows, truncation };
}

export function parseMatrix(text: string, file: string, expectedRanks?: number): TransferMatrix {
  return parseMatrixText(text, file, expectedRanks).matrix;
}

export function readMatrixFile(file: string, expectedRanks?: number): ParsedMatrix {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new MatrixError(`cannot read the matrix file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, file);
  }
  return parseMatrixText(text, file, expectedRanks);
}

export function readMatrix(file: string, expectedRanks?: number): TransferMatrix {
  return readMatrixFile(file, expectedRanks).matrix;
}

/** The one line a run prints for a file whose cells were truncated. */
export function truncationNote(file: string, t: MatrixTruncation): string {
  const { token, row, col, value } = t.first;
  return (
    `${file}: ${t.cells} cell(s) are not whole bytes (the first: '${token}' at row ${row}, column ${col} = ${value} bytes); ` +
    `truncated to whole bytes as kvbench does (int()), ${Number(t.droppedBytes.toFixed(3))} byte(s) dropped in all`
  );
}

/** Exact bytes, one row per line: what the matrix generator writes (no lossy units). */
export function formatMatrix(matrix: TransferMatrix): string {
  return matrix.map((row) => row.join(' ')).join('\n') + '\n';
}

export const rowSum = (m: TransferMatrix, i: number): number => m[i].reduce((a, b) => a + b, 0);
export const colSum = (m: TransferMatrix, j: number): number => m.reduce((a, row) => a + row[j], 0);
export const totalBytes = (m: TransferMatrix): number => m.reduce((a, row) => a + row.reduce((x, y) => x + y, 0), 0);
/** Ranks that send anything in this pattern. */
export const senders = (m: TransferMatrix): number[] => m.flatMap((row, i) => (row.some((c) => c > 0) ? [i] : []));
