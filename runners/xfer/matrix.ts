// Transfer matrices: N x N, row i = sender, column j = receiver, cell = bytes i sends to j.
// Cells are read as kvbench reads them (NIXL benchmark/kvbench main.py): each a size token
// (runners/common/size.ts: Python float syntax, units K, M, G = 1024^n or B), truncated to whole
// bytes as int() does: `3.53G` is 3790308638 bytes; the reader says once per file how many bytes
// that dropped. Beyond kvbench: `#` comments and blank lines are accepted.
import { sizeValue } from '../common/size.ts';
import { FileReadError, READ_LIMITS, readTextFileSync } from '../common/read-file.ts';
import { XferError } from './errors.ts';
import type { ErrorCategory } from '../common/errors.ts';

export type TransferMatrix = number[][];

export class MatrixError extends XferError {
  override get category(): ErrorCategory {
    return 'input';
  }
  constructor(
    message: string,
    override readonly file: string,
    readonly line?: number,
    readonly col?: number,
  ) {
    super(line === undefined ? `${file}: ${message}` : `${file}:${line}:${col} ${message}`);
    this.name = 'MatrixError';
  }
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
    text = readTextFileSync(file, READ_LIMITS.matrix);
  } catch (err) {
    if (err instanceof FileReadError) throw new MatrixError(`the matrix file ${err.reason}`, file);
    throw err;
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
